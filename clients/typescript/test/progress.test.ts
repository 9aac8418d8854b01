import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { progressBar } from '../src/cli/progress.ts'

/** Back to the start of the line, and the line cleared: how each drawing of the bar begins. */
const CLEAR_LINE = '\r\x1b[2K'

function drawn(text: string): string {
  assert.ok(text.startsWith(CLEAR_LINE))
  return text.slice(CLEAR_LINE.length)
}

/** A stand-in for stderr that keeps what is written to it. */
function terminal(isTTY: boolean) {
  const writes: string[] = []
  const stream = { isTTY, columns: 100, write: (text: string) => writes.push(text) > 0 }
  return { writes, stream: stream as unknown as NodeJS.WriteStream }
}

describe('the progress bar of an import', () => {
  it('on a terminal, is redrawn in place as the file goes, and every 200 ms while the service stores it', (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'Date'] })
    const { writes, stream } = terminal(true)
    const bar = progressBar(stream, 'Importing books.csv', 'the service is storing it')
    const total = 4 * 1024 * 1024
    bar.update({ sent: 0, total })
    t.mock.timers.tick(200)
    bar.update({ sent: total / 2, total })
    t.mock.timers.tick(200)
    assert.ok(writes.every((text) => text.startsWith(CLEAR_LINE)))
    assert.match(drawn(writes.at(-1)!), /^Importing books\.csv \[#{20}-{20}\] {2}50% 2\.0 MiB of 4\.0 MiB /)
    bar.update({ sent: total, total })
    const before = writes.length
    t.mock.timers.tick(1000)
    assert.equal(writes.length - before, 5)
    assert.match(drawn(writes.at(-1)!), /^Importing books\.csv: 4\.0 MiB sent in [\d.]+ s; the service is storing it… 1\.0 s$/)
    bar.stop()
    assert.equal(writes.at(-1), CLEAR_LINE)
    t.mock.timers.tick(1000)
    assert.equal(writes.at(-1), CLEAR_LINE)
  })

  it('written to a file or a pipe, is a line at each tenth of the file', () => {
    const { writes, stream } = terminal(false)
    const bar = progressBar(stream, 'Checking books.csv', 'the service is checking it')
    for (let sent = 0; sent <= 1000; sent += 50) bar.update({ sent, total: 1000 })
    bar.stop()
    assert.equal(writes.length, 11)
    assert.ok(writes.every((text) => text.endsWith('\n') && !text.includes('\r')))
    assert.match(writes[5]!, /^Checking books\.csv \[#+-+\] {2}50% 500 bytes of 1000 bytes/)
    assert.match(writes[10]!, /^Checking books\.csv: 1000 bytes sent in [\d.]+ s; the service is checking it… 0\.0 s\n$/)
  })
})
