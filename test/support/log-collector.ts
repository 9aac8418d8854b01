import { Writable } from 'node:stream'

/** A log destination that keeps every JSON line written to it. */
export function logCollector() {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  return { lines, stream, text: () => JSON.stringify(lines) }
}
