/** How long a beginning of a word the index holds as a lexeme of its own (migration 011). */
export const INDEXED_BEGINNING = 3

const SURROGATE = /[\uD800-\uDFFF]/

/** The first INDEXED_BEGINNING characters of `word`, counted as PostgreSQL counts them; undefined when it is shorter. */
function beginningOf(word: string): string | undefined {
  if (!SURROGATE.test(word)) return word.length >= INDEXED_BEGINNING ? word.slice(0, INDEXED_BEGINNING) : undefined
  const characters = Array.from(word)
  return characters.length >= INDEXED_BEGINNING ? characters.slice(0, INDEXED_BEGINNING).join('') : undefined
}

/**
 * The lexemes of a book's `words` column, separated by spaces, as `book_lexemes()` makes them
 * (migration 025) and the writes now send them (migration 026): each word of the title's and the
 * author's, and the beginning of each word long enough, followed by `~`. PostgreSQL ran that
 * function in PL/pgSQL for every book it stored, about a tenth of its work on an import
 * (docs/performance-log.md); made here, it costs the service a few microseconds a book.
 */
export function lexemesOf(titleWords: string, authorWords: string): string {
  const lexemes: string[] = []
  for (const words of [titleWords, authorWords]) {
    for (const word of words.split(' ')) {
      if (word === '') continue
      lexemes.push(word)
      const beginning = beginningOf(word)
      if (beginning !== undefined) lexemes.push(`${beginning}~`)
    }
  }
  return lexemes.join(' ')
}

/** The SQL that makes the `words` column of the text lexemesOf gives. */
export const wordsOf = (lexemes: string) => `array_to_tsvector(string_to_array(${lexemes}, ' '))`
