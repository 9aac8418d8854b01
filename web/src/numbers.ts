/** Numbers as the reader writes them: `Intl.NumberFormat` in the browser's own locale ("10,021", "10.021", "10 021"). */
const numbers = new Intl.NumberFormat()

export function formatNumber(value: number): string {
  return numbers.format(value)
}

/** "1 book", "10,021 books". */
export function countOf(count: number, word: string): string {
  return `${formatNumber(count)} ${word}${count === 1 ? '' : 's'}`
}

const percents = new Intl.NumberFormat(undefined, { style: 'percent' })

/** "43%", "43 %": a share from 0 to 1 as the reader writes percentages. */
export function formatPercent(share: number): string {
  return percents.format(share)
}
