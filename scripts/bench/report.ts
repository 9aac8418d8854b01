import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { describeSpread, problems, type Measurement } from './measure.ts'

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

/**
 * The sections as a Markdown table: each figure the median of the runs with their lowest and
 * highest in brackets; the ratio to the ceiling; latencies as wrk measured them; the server's
 * CPU time per request, the service's and the ceiling's, and their ratio: what the ratio of
 * rates would be with both servers busy on their CPU, which the machine's other load moves
 * far less than the rates.
 */
export function table(sections: Section[]): string {
  const lines = [
    '| run | operation | ratio | req/s | ceiling req/s | p50 ms | p99 ms | CPU µs/request | ceiling CPU µs/request | CPU ratio | bytes allocated/request | ceiling bytes/request |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const section of sections) {
    if (section.note) lines.push(`| ${section.title} | ${section.note} |  |  |  |  |  |  |  |  |  |  |`)
    for (const m of section.measurements) {
      const cells = [
        section.title,
        `\`${m.name}\``,
        `**${describeSpread(m.ratio, 2)}**`,
        describeSpread(m.requestsPerSecond),
        describeSpread(m.ceilingRequestsPerSecond),
        m.p50Ms.median.toFixed(1),
        m.p99Ms.median.toFixed(1),
        describeSpread(m.cpuMicrosecondsPerRequest),
        m.ceilingCpuMicrosecondsPerRequest.median.toFixed(0),
        (m.ceilingCpuMicrosecondsPerRequest.median / m.cpuMicrosecondsPerRequest.median).toFixed(2),
        describeSpread(m.bytesPerRequest),
        m.ceilingBytesPerRequest.median.toFixed(0),
      ]
      lines.push(`| ${cells.join(' | ')} |${m.errors > 0 ? ` ${problems(m)}` : ''}`)
    }
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
