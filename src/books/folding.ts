/**
 * How text is compared when books are found: case and accents folded away, and words cut out,
 * in JavaScript, so that both engines store, index and compare exactly the same strings.
 */

/** Letters that Unicode does not decompose into a base letter and a mark. */
const UNDECOMPOSED: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
}
const UNDECOMPOSED_PATTERN = new RegExp(`[${Object.keys(UNDECOMPOSED).join('')}]`, 'gu')
const MARKS = /\p{M}+/gu
const APOSTROPHES = /[\u2018\u2019\u02bc\u2032\uff07]/gu
const HYPHENS = /[\u2010\u2011]/gu
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

/**
 * `text` with case and accents folded away: "García" and "GARCIA" both become "garcia".
 * Compatibility forms (ligatures, full-width letters) become their plain letters, and every
 * apostrophe and hyphen the plain ASCII one.
 */
export function fold(text: string): string {
  // Printable ASCII has no marks, compatibility forms or other apostrophes: only case to fold.
  if (PRINTABLE_ASCII.test(text)) return text.toLowerCase()
  return text
    .normalize('NFKD')
    .toLowerCase()
    .normalize('NFKD')
    .replace(MARKS, '')
    .replace(UNDECOMPOSED_PATTERN, (letter) => UNDECOMPOSED[letter]!)
    .replace(APOSTROPHES, "'")
    .replace(HYPHENS, '-')
}

/**
 * Runs of letters, digits and symbols (emoji are words too), joined by an apostrophe, a dot or a
 * hyphen: "sorcerer's", "j.k", "spider-man". Other characters separate words.
 */
const COMPOUND = /[\p{L}\p{N}\p{So}]+(?:['.-][\p{L}\p{N}\p{So}]+)*/gu
const PART = /[\p{L}\p{N}\p{So}]+/gu
const JOINERS = /['.-]/

/**
 * The longest word kept, in characters: PostgreSQL refuses lexemes over 2047 bytes, and no
 * search needs more. Queries are cut the same way, so a long word still finds itself.
 */
const MAX_WORD = 200

function clip(word: string): string {
  // By code points, so that an emoji is never cut in half.
  return word.length > MAX_WORD ? [...word].slice(0, MAX_WORD).join('') : word
}

/**
 * The words a book is found by, from its folded title or author: each part of a compound, then
 * the compound written without its joiners, so that "sorcerers", "jk" and "spiderman" find
 * "Sorcerer's", "J.K." and "Spider-Man" as well as the parts do.
 */
export function indexWords(folded: string): string[] {
  const words: string[] = []
  for (const compound of folded.match(COMPOUND) ?? []) {
    if (!JOINERS.test(compound)) {
      words.push(clip(compound))
      continue
    }
    // A compound is its parts joined by single joiners.
    const parts = compound.split(JOINERS)
    words.push(...parts.map(clip), clip(parts.join('')))
  }
  return words
}

/** The words of a query, each of which must begin a word of the book: the parts, once each. */
export function queryWords(q: string): string[] {
  return [...new Set((fold(q).match(PART) ?? []).map(clip))]
}

/** What is stored beside a book so that it can be found and sorted. */
export interface BookSearchKeys {
  titleFolded: string
  authorFolded: string
  /** Its words, separated by single spaces. */
  titleWords: string
  authorWords: string
}

export function searchKeys(book: { title: string; author: string }): BookSearchKeys {
  const titleFolded = fold(book.title)
  const authorFolded = fold(book.author)
  return {
    titleFolded,
    authorFolded,
    titleWords: indexWords(titleFolded).join(' '),
    authorWords: indexWords(authorFolded).join(' '),
  }
}
