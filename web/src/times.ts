import { h } from './dom.ts'

/** Times as the reader writes them, in their own time zone: "25 Nov 2026, 10:02", "Nov 25, 2026, 10:02 AM". */
const times = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export function formatTime(iso: string): string {
  return times.format(new Date(iso))
}

/** A `<time>` element: the reader's wording, the exact instant for machines. */
export function timeElement(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso }, formatTime(iso))
}
