/** Numbers as the reader writes them: `Intl.NumberFormat` in the browser's own locale ("10,021", "10.021", "10 021"). */
const numbers = new Intl.NumberFormat()

export function formatNumber(value: number): string {
  return numbers.format(value)
}

/** "1 book", "10,021 books". */
export function countOf(count: number, word: string): string {
  return `${formatNumber(count)} ${word}${count === 1 ? '' : 's'}`
}
