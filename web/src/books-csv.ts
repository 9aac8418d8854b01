import type { Book } from 'book-catalogue-client'

/**
 * A cell a spreadsheet would run as a formula gets a leading `'`; one that already starts with
 * quotes before such a character gets one more, so that the import takes exactly one off.
 */
const FORMULA = /^'*[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]/

function cell(text: string): string {
  const safe = FORMULA.test(text) ? `'${text}` : text
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/**
 * The books as the service's CSV export writes them (docs/api.md): a byte-order mark,
 * the header `id,title,author,year`, RFC 4180 quoting and CRLF line ends. The service's import
 * reads it back.
 */
export function booksCsv(books: readonly Book[]): string {
  let text = '\uFEFFid,title,author,year\r\n'
  for (const { id, title, author, year } of books) text += `${id},${cell(title)},${cell(author)},${year}\r\n`
  return text
}
