import { request } from 'node:http'
import { peakResidentDuring } from './processes.ts'
import { seedSqlite } from './seed.ts'
import { login, startService } from './service.ts'

export interface ScalePoint {
  books: number
  /** From the request to the last byte of the response. */
  seconds: number
  bytes: number
  /** Peak RSS of the service after start-up, and after answering the whole list. */
  peakRssAtStartBytes: number
  peakRssBytes: number
}

interface Download {
  seconds: number
  body: Buffer
}

function download(url: string, token: string): Promise<Download> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    request(url, { headers: { authorization: token } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`GET /books answered ${response.statusCode}`))
        else resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, body: Buffer.concat(chunks) })
      })
      response.on('error', reject)
    })
      .on('error', reject)
      .end()
  })
}

/** The list must be the whole, ascending, valid JSON envelope. */
function check(body: Buffer, books: number): void {
  const { status, data } = JSON.parse(body.toString('utf8')) as { status: number; data: { id: number }[] }
  if (status !== 200 || data.length !== books) throw new Error(`GET /books returned ${data.length} of ${books} books`)
  for (let i = 1; i < data.length; i++) {
    if (data[i]!.id <= data[i - 1]!.id) throw new Error('GET /books is not ascending by id')
  }
}

/**
 * For each size, grows one SQLite file to that many books (written straight into the file,
 * with the service stopped), restarts the service on it, and reads the whole list once.
 */
export async function measureScale(
  path: string,
  sizes: number[],
  cpus: string | undefined,
  log: (line: string) => void,
): Promise<ScalePoint[]> {
  // Started once so that the service's own migrations create the schema.
  await (await startService({ dbUrl: `sqlite:${path}`, cpus })).stop()
  const points: ScalePoint[] = []
  let seeded = 0
  for (const books of [...sizes].sort((a, b) => a - b)) {
    seedSqlite(path, books - seeded)
    seeded = books
    const service = await startService({ dbUrl: `sqlite:${path}`, cpus })
    try {
      const token = await login(service)
      const {
        value: { seconds, body },
        beforeBytes: peakRssAtStartBytes,
        peakBytes: peakRssBytes,
      } = await peakResidentDuring(service.pid, `sqlite:${path}`, () => download(`${service.baseUrl}/books`, token))
      check(body, books)
      points.push({ books, seconds, bytes: body.length, peakRssAtStartBytes, peakRssBytes })
      log(
        `  ${String(books).padStart(9)} books: ${seconds.toFixed(2)} s, ${(body.length / 2 ** 20).toFixed(1)} MiB, peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
      )
    } finally {
      await service.stop()
    }
  }
  return points
}

export function scaleTable(points: ScalePoint[]): string {
  const lines = [
    '| books | seconds | MiB written | peak RSS MiB, the mapped store file apart | RSS after start-up MiB |',
    '|---:|---:|---:|---:|---:|',
  ]
  for (const p of points) {
    const mib = (bytes: number, digits: number) => (bytes / 2 ** 20).toFixed(digits)
    lines.push(
      `| ${p.books.toLocaleString('en')} | ${p.seconds.toFixed(2)} | ${mib(p.bytes, 1)} | ${mib(p.peakRssBytes, 0)} | ${mib(p.peakRssAtStartBytes, 0)} |`,
    )
  }
  return lines.join('\n')
}
