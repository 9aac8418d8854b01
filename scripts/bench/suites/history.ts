/**
 * History and trash at size: the first page of the history of a book changed 10,000 times, and
 * the first page of a trash of 10,000 books, each read one request at a time: p50 and p95.
 */
import { Agent } from 'node:http'
import { join } from 'node:path'
import { postgresSection } from '../engines.ts'
import type { Section } from '../report.ts'
import { createBooks, login, startService, type Service, type ServiceOptions } from '../service.ts'
import type { BenchContext, Suite } from '../suites.ts'
import { percentile, timed } from '../timed.ts'

const CHANGES = 10_000
const SAMPLES = 500
const CONCURRENCY = 16

/** `count` requests made by `send(i)`, CONCURRENCY at a time; each must succeed. */
async function many(count: number, send: (i: number) => Promise<Response>) {
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const response = await send(next++)
        if (!response.ok) throw new Error(`answered ${response.status}: ${await response.text()}`)
        await response.arrayBuffer()
      }
    }),
  )
}

async function firstPages(service: Service, token: string, paths: string[]) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const rows: string[] = []
  for (const path of paths) {
    for (let i = 0; i < 20; i++) await timed(service, path, token, agent)
    const times: number[] = []
    for (let i = 0; i < SAMPLES; i++) {
      const answer = await timed(service, path, token, agent)
      if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`)
      times.push(answer.ms)
    }
    rows.push(`${path} | ${percentile(times, 50).toFixed(2)} | ${percentile(times, 95).toFixed(2)}`)
  }
  agent.destroy()
  return rows
}

async function engine(title: string, options: ServiceOptions, context: BenchContext): Promise<string[]> {
  const service = await startService({ ...options, cpus: context.serverCpus })
  try {
    const token = await login(service)
    const headers = { authorization: token, 'content-type': 'application/json' }
    const [id] = await createBooks(service, token, 1)
    context.log(`${title}: changing one book ${CHANGES} times, and putting ${CHANGES} books in the trash`)
    await many(CHANGES, (i) =>
      fetch(`${service.baseUrl}/book/${id}`, { method: 'PUT', headers, body: JSON.stringify({ year: 1000 + (i % 1000) }) }),
    )
    const trashed = await createBooks(service, token, CHANGES)
    await many(trashed.length, (i) => fetch(`${service.baseUrl}/book/${trashed[i]}`, { method: 'DELETE', headers }))
    const rows = await firstPages(service, token, [
      `/book/${id}/history`,
      '/books/trash',
      `/book/${id}/history?limit=100`,
      '/books/trash?limit=100',
    ])
    return rows.map((row) => `| ${title} | ${row} |`)
  } finally {
    await service.stop()
  }
}

const suite: Suite = {
  description: `the first page of a history of ${CHANGES} changes and of a trash of ${CHANGES} books, p95`,
  async run(context) {
    const rows = await engine('SQLite', { dbUrl: `sqlite:${join(context.work, 'history.db')}` }, context)
    const postgres = await postgresSection(
      `bench_history_${process.pid}`,
      async (options): Promise<Section> => {
        rows.push(...(await engine('PostgreSQL', options, context)))
        return { title: 'PostgreSQL', measurements: [] }
      },
      context.log,
    )
    const table = [
      `First pages, one request at a time (${SAMPLES} each): ms; target p95 <= 10 ms`,
      '',
      '| engine | request | p50 | p95 |',
      '|---|---|---:|---:|',
      ...rows,
    ].join('\n')
    return { sections: [postgres], tables: [table] }
  },
}
export default suite
