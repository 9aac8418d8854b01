/**
 * How far a file is sent, on stderr: a bar redrawn in place on a terminal, a line every tenth
 * of the file otherwise. On a terminal it is redrawn every 200 ms even while nothing moves, so
 * that the time waited keeps counting while the service stores the books.
 */
import type { Progress } from '../index.ts'
import { size } from './output.ts'

const REDRAW_MS = 200

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

export interface ProgressBar {
  update(progress: Progress): void
  /** Clears the bar: the caller says what came of it. */
  stop(): void
}

/** `label` names the file and what is done with it; `waiting`, what the service does once it has the whole file. */
export function progressBar(stderr: NodeJS.WriteStream, label: string, waiting: string): ProgressBar {
  const started = Date.now()
  let last: Progress = { sent: 0, total: undefined }
  let tenth = -1
  let sentAt: number | undefined

  const line = () => {
    const { sent, total } = last
    const elapsed = Date.now() - started
    if (total !== undefined && sent >= total) {
      sentAt ??= Date.now()
      return `${label}: ${size(total)} sent in ${seconds(sentAt - started)}; ${waiting}… ${seconds(Date.now() - sentAt)}`
    }
    const rate = elapsed > 0 ? `${size((sent / elapsed) * 1000)}/s` : ''
    if (total === undefined || total === 0) return `${label}: ${size(sent)} sent ${rate}`
    const width = Math.max(10, Math.min(40, (stderr.columns ?? 80) - label.length - 40))
    const filled = Math.round((sent / total) * width)
    const percent = `${Math.floor((sent / total) * 100)}%`.padStart(4)
    return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent} ${size(sent)} of ${size(total)} ${rate}`
  }

  if (!stderr.isTTY) {
    return {
      update(progress) {
        last = progress
        const { sent, total } = progress
        if (total === undefined || total === 0) return
        const now = Math.floor((sent / total) * 10)
        if (now === tenth) return
        tenth = now
        stderr.write(`${line()}\n`)
      },
      stop() {},
    }
  }
  const draw = () => stderr.write(`\r\x1b[2K${line().slice(0, (stderr.columns ?? 80) - 1)}`)
  const timer = setInterval(draw, REDRAW_MS)
  let drawnAt = 0
  draw()
  return {
    update(progress) {
      last = progress
      if (Date.now() - drawnAt < REDRAW_MS / 2) return
      drawnAt = Date.now()
      draw()
    },
    stop() {
      clearInterval(timer)
      stderr.write('\r\x1b[2K')
    },
  }
}
