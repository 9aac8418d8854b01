import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import type { ScalePoint } from './scale.ts'
import type { Measurement } from './suite.ts'

export interface Section {
  title: string
  /** Why the section is missing or what limits it. */
  note?: string
  measurements: Measurement[]
}

export function describeMachine() {
  const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown'
  return {
    cpu: model,
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadAverageAtStart: loadavg().map((load) => Number(load.toFixed(2))),
  }
}

function row(cells: string[], widths: number[]): string {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')
}

/**
 * Requests per second as a fraction of the ceiling; latencies in ms (autocannon's whole
 * milliseconds) and as multiples of the ceiling's, either counted as 1 ms at least; the
 * server's CPU time per request, the service's and the ceiling's.
 */
export function table(sections: Section[]): string {
  const widths = [34, 9, 7, 15, 15, 18]
  const lines = [row(['', 'req/s', 'ratio', 'p50 ms (×ceil)', 'p99 ms (×ceil)', 'CPU µs/req (ceil)'], widths)]
  for (const section of sections) {
    lines.push(section.note ? `${section.title}: ${section.note}` : section.title)
    for (const m of section.measurements) {
      const ms = (value: number) => (value < 1 ? '<1' : value.toFixed(0))
      const latency = (value: number, ceiling: number) => `${ms(value)} (${(Math.max(1, value) / Math.max(1, ceiling)).toFixed(1)}×)`
      lines.push(
        row(
          [
            `  ${m.name}`,
            m.requestsPerSecond.toFixed(0),
            m.ratio.toFixed(2),
            latency(m.p50Ms, m.ceiling.p50Ms),
            latency(m.p99Ms, m.ceiling.p99Ms),
            `${m.cpuMicrosecondsPerRequest.toFixed(0)} (${m.ceiling.cpuMicrosecondsPerRequest.toFixed(0)})`,
          ],
          widths,
        ),
      )
    }
    const ceilings = section.measurements.map((m) => m.ceiling.requestsPerSecond)
    if (ceilings.length > 0) {
      lines.push(`  (ceiling ${Math.min(...ceilings).toFixed(0)} to ${Math.max(...ceilings).toFixed(0)} req/s)`)
    }
  }
  return lines.join('\n')
}

export function scaleTable(points: ScalePoint[]): string {
  const widths = [12, 9, 11, 16, 12]
  const lines = [row(['books', 'seconds', 'MiB out', 'peak RSS MiB', 'at start MiB'], widths)]
  for (const p of points) {
    lines.push(
      row(
        [
          String(p.books),
          p.seconds.toFixed(2),
          (p.bytes / 2 ** 20).toFixed(1),
          (p.peakRssBytes / 2 ** 20).toFixed(0),
          (p.peakRssAtStartBytes / 2 ** 20).toFixed(0),
        ],
        widths,
      ),
    )
  }
  return lines.join('\n')
}

/** Writes the run under bench/results/, by time, and as latest.json. */
export function writeResults(results: unknown, startedAt: Date): string {
  const dir = new URL('../../bench/results/', import.meta.url)
  mkdirSync(dir, { recursive: true })
  const json = `${JSON.stringify(results, null, 2)}\n`
  const file = new URL(`${startedAt.toISOString().replace(/[:.]/g, '-')}.json`, dir)
  writeFileSync(file, json)
  writeFileSync(new URL('latest.json', dir), json)
  return file.pathname
}
