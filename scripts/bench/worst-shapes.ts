/**
 * `npm run bench -- worst-shapes --data=DIR [--against=CHECKOUT] [--books=N] [--samples=N]
 * [--rounds=N] [--engines=sqlite,postgres]`: the first pages of the slowest search shapes at a
 * million books (or N), on each engine, by this checkout's service and, with `--against`, by
 * another checkout's, such as the main branch's, taking turns in the same conditions: each round
 * starts each service in turn, the order changing every round, and sends each shape `samples`
 * times. Prints per shape the median over rounds of p50 and p95, the p95's range, and how many
 * answers were `503` (out of time, counted at 2 s).
 *
 * The catalogue is the one `npm run bench -- hostile --data=DIR` seeds and keeps, seeded here if
 * absent. The SQLite file is a copy of it, migrated by whichever service opens it first; a
 * service ignores the migrations it does not know. Both services read the catalogue as this
 * checkout migrated it: a migration that drops or replaces an index (024) is compared by running
 * each checkout without `--against`, in turns, the PostgreSQL catalogue put back between them.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { Agent } from 'node:http'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { copyCatalogue, seedPostgres, seedSqlite } from './catalogue.ts'
import { createDatabase, serverSettings } from './postgres.ts'
import { login, startService } from './service.ts'
import { untilSummarised } from './summaries.ts'
import { percentile, timed, type Answer } from './timed.ts'

const SHAPES = [
  'q=the&limit=20',
  'q=a&limit=20',
  'q=the+of&limit=20',
  'author=qx&sort=title&limit=20',
  'title=qx&sort=-author&limit=20',
  'author=zq&sort=-year&limit=20',
  'author=qx&limit=20',
  'title=e&sort=-year&limit=20',
  'q=the&limit=20&count=true',
  'q=the+of&limit=20&count=true',
  'author=qx&sort=title&limit=20&count=true',
  // Pairs that the generated catalogue holds: in 7 of its 977 blocks, in 206, and in 661.
  'title=xl&sort=-year&limit=20',
  'title=gv&sort=-author&limit=20&count=true',
  'author=cq&sort=title&limit=20',
]
const PAGES = 'q=the&limit=20, pages 2 to 5'

/** Milliseconds of each sample of each shape, by one service in one round. */
type Round = Map<string, number[]>

/** Answers `503` (out of time) per shape and service, over every round of one engine. */
const unavailable = new Map<string, number>()

async function measure(name: string, main: string | undefined, dbUrl: string, samples: number): Promise<Round> {
  const service = await startService({ dbUrl, main })
  const round: Round = new Map()
  try {
    const token = await login(service)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    for (const shape of SHAPES) {
      await timed(service, `/books?${shape}`, token, agent)
      const times: number[] = []
      for (let i = 0; i < samples; i++) {
        const answer = await timed(service, `/books?${shape}`, token, agent)
        if (answer.status === 503) unavailable.set(`${name} ${shape}`, (unavailable.get(`${name} ${shape}`) ?? 0) + 1)
        else if (answer.status !== 200) throw new Error(`${shape} answered ${answer.status}`)
        times.push(answer.ms)
      }
      round.set(shape, times)
      console.log(`  ${shape}: p50 ${percentile(times, 50).toFixed(0)} ms, p95 ${percentile(times, 95).toFixed(0)} ms`)
    }
    const times: number[] = []
    for (let i = 0; i < Math.max(2, samples / 4); i++) {
      let path: string | undefined = '/books?q=the&limit=20'
      for (let page = 1; page <= 5 && path !== undefined; page++) {
        const answer: Answer = await timed(service, path, token, agent)
        if (page > 1) times.push(answer.ms)
        path = answer.link
      }
    }
    round.set(PAGES, times)
    agent.destroy()
  } finally {
    await service.stop()
  }
  return round
}

const median = (values: number[]) => percentile(values, 50)

async function postgresUrl(books: number): Promise<string> {
  const name = `book_bench_hostile_${books}`
  const url = `postgres://postgres@127.0.0.1:5432/${name}`
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' })
  await admin.connect()
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]).finally(() => admin.end())
  if (rowCount === 1) return url
  const created = await createDatabase(name)
  if ('skip' in created) throw new Error(created.skip)
  await (await startService({ dbUrl: url })).stop()
  await seedPostgres(url, books)
  return url
}

async function sqliteUrl(dir: string, books: number): Promise<string> {
  const pristine = join(dir, `hostile-${books}.db.pristine`)
  if (!existsSync(pristine)) {
    await (await startService({ dbUrl: `sqlite:${pristine}` })).stop()
    await seedSqlite(pristine, books)
  }
  const path = join(dir, `worst-shapes-${books}.db`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true })
  copyCatalogue(pristine, path)
  return `sqlite:${path}`
}

/**
 * Starts this checkout's service on the catalogue, which migrates it, and stops it once every
 * block is summarised: a service that has just migrated a catalogue summarises it for some
 * seconds, reading each of its blocks whole meanwhile.
 */
async function migrate(dbUrl: string): Promise<void> {
  const service = await startService({ dbUrl })
  try {
    await untilSummarised(dbUrl)
  } finally {
    await service.stop()
  }
}

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      against: { type: 'string' },
      books: { type: 'string', default: '1000000' },
      samples: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '2' },
      engines: { type: 'string', default: 'sqlite,postgres' },
    },
  })
  if (values.data === undefined) throw new Error('--data=DIR is needed: the catalogue is kept there')
  mkdirSync(values.data, { recursive: true })
  const books = Number(values.books)
  const samples = Number(values.samples)
  const rounds = Number(values.rounds)
  const services: [string, string | undefined][] = [['this', undefined]]
  if (values.against !== undefined) services.push(['against', join(resolve(values.against), 'src/main.ts')])
  const lines = [`| engine | search | ${services.map(([name]) => `${name}: p50 / p95 (p95 range)`).join(' | ')} |`]
  lines.push(`|---|---|${services.map(() => '---:').join('|')}|`)
  const settings: string[] = []
  for (const engine of values.engines.split(',')) {
    const dbUrl = engine === 'sqlite' ? await sqliteUrl(values.data, books) : await postgresUrl(books)
    // The first service to open the SQLite file migrates it: this checkout's, before any round.
    await migrate(dbUrl)
    if (engine === 'postgres') settings.push(`PostgreSQL: ${await serverSettings(dbUrl)}`)
    const results = new Map(services.map(([name]) => [name, [] as Round[]]))
    unavailable.clear()
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? services : [...services].reverse()
      for (const [name, main] of order) {
        console.log(`${engine}: round ${round + 1}, ${name}`)
        results.get(name)!.push(await measure(name, main, dbUrl, samples))
      }
    }
    for (const shape of [...SHAPES, PAGES]) {
      const cells = services.map(([name]) => {
        const p50s = results.get(name)!.map((round) => percentile(round.get(shape)!, 50))
        const p95s = results.get(name)!.map((round) => percentile(round.get(shape)!, 95))
        const range = `${Math.min(...p95s).toFixed(0)}–${Math.max(...p95s).toFixed(0)}`
        const stopped = unavailable.get(`${name} ${shape}`)
        return `${median(p50s).toFixed(0)} / ${median(p95s).toFixed(0)} ms (${range})${stopped === undefined ? '' : `, ${stopped} × 503`}`
      })
      lines.push(`| ${engine} | \`${shape}\` | ${cells.join(' | ')} |`)
    }
  }
  console.log(`\nFirst pages at ${books} books, ${rounds} rounds of ${samples} samples\n\n${lines.join('\n')}`)
  if (settings.length > 0) console.log(`\n${settings.join('\n')}`)
}
