import { h } from './dom.ts'

/** Long enough for the browser to start saving the file; the URL only holds the file in memory. */
const OBJECT_URL_LIFETIME_MS = 60_000

/** Saves what the page holds as a file, through an object URL and a `download` link. */
export function saveFile(content: Blob, name: string): void {
  const href = URL.createObjectURL(content)
  h('a', { href, download: name }).click()
  setTimeout(() => URL.revokeObjectURL(href), OBJECT_URL_LIFETIME_MS)
}
