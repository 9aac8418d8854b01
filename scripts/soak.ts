/**
 * Drives mixed traffic at a real service process for a set time and reports errors and
 * the process's memory. Usage: npm run soak -- [--minutes N] [--clients N]
 * (or SOAK_MINUTES, SOAK_CLIENTS). SOAK_DB_URL soaks another store; by default a fresh
 * SQLite file in a temporary folder. Exits 1 when any answer was not the expected one.
 */
import { randomInt } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { CREDENTIALS, login, startService, type Service } from './bench/service.ts'

const { values } = parseArgs({
  options: { minutes: { type: 'string' }, clients: { type: 'string' } },
})
const minutes = Number(values.minutes ?? process.env.SOAK_MINUTES ?? 5)
const clients = Number(values.clients ?? process.env.SOAK_CLIENTS ?? 8)
if (!(minutes > 0) || !Number.isInteger(clients) || clients < 1) {
  console.error('usage: npm run soak -- --minutes N --clients N')
  process.exit(2)
}

/** Resident memory of a process in MiB, from /proc. */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : Number.NaN
}

const OWN_MAX = 100

interface Envelope {
  status: number
  message: string
  data: unknown
}

const counts = new Map<string, number>()
const errors: string[] = []
let requests = 0

function count(key: string) {
  counts.set(key, (counts.get(key) ?? 0) + 1)
}

async function expect(service: Service, name: string, expected: number[], init: RequestInit & { path: string }) {
  requests++
  let res: Response
  try {
    res = await fetch(`${service.baseUrl}${init.path}`, init)
  } catch (err) {
    errors.push(`${name}: ${(err as Error).message}`)
    return undefined
  }
  const text = await res.text()
  let body: Envelope | undefined
  try {
    body = JSON.parse(text) as Envelope
  } catch {
    body = undefined
  }
  const keys = body === undefined ? '' : Object.keys(body).sort().join(',')
  if (!expected.includes(res.status) || body?.status !== res.status || keys !== 'data,message,status') {
    errors.push(`${name}: ${res.status} ${text.slice(0, 200)}`)
    return undefined
  }
  count(`${name} ${res.status}`)
  return { res, body }
}

async function client(service: Service, until: number) {
  let token = await login(service)
  let loggedInAt = Date.now()
  const own: number[] = []
  const json = (extra: Record<string, string> = {}) => ({ authorization: token, 'content-type': 'application/json', ...extra })

  while (Date.now() < until) {
    if (Date.now() - loggedInAt > 60_000) {
      const answer = await expect(service, 'login', [200], {
        path: '/token',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(CREDENTIALS),
      })
      if (answer) token = (answer.body.data as { token: string }).token
      loggedInAt = Date.now()
    }
    // Creates and deletes balance, and each client keeps at most OWN_MAX books, so the data
    // stays about the same size and a growing RSS would mean a leak, not more data.
    let roll = randomInt(100)
    if (own.length >= OWN_MAX && roll < 17) roll = 80
    if (roll < 17 || own.length === 0) {
      const answer = await expect(service, 'create', [201], {
        path: '/book',
        method: 'POST',
        headers: json(),
        body: JSON.stringify({ title: `Soak ${randomInt(1e9)}`, author: 'Soak', year: randomInt(-9999, 10_000) }),
      })
      if (answer) own.push((answer.body.data as { id: number }).id)
    } else if (roll < 45) {
      const id = own[randomInt(own.length)]!
      await expect(service, 'get', [200], { path: `/book/${id}`, headers: json() })
    } else if (roll < 60) {
      const id = own[randomInt(own.length)]!
      const read = await expect(service, 'get', [200], { path: `/book/${id}`, headers: json() })
      const etag = read?.res.headers.get('etag')
      if (etag) {
        await expect(service, 'update', [200], {
          path: `/book/${id}`,
          method: 'PUT',
          headers: json({ 'if-match': etag }),
          body: JSON.stringify({ year: randomInt(-9999, 10_000) }),
        })
      }
    } else if (roll < 75) {
      await expect(service, 'list page', [200], { path: `/books?limit=50&after=${randomInt(1000)}`, headers: json() })
    } else if (roll < 76) {
      await expect(service, 'list all', [200], { path: '/books', headers: json() })
    } else if (roll < 93) {
      const id = own.splice(randomInt(own.length), 1)[0]!
      await expect(service, 'delete', [200], { path: `/book/${id}`, method: 'DELETE', headers: json() })
    } else if (roll < 94) {
      await expect(service, 'stale update', [412], {
        path: `/book/${own[0]}`,
        method: 'PUT',
        headers: json({ 'if-match': '"0"' }),
        body: JSON.stringify({ year: 1 }),
      })
    } else if (roll < 96) {
      await expect(service, 'invalid body', [400], { path: '/book', method: 'POST', headers: json(), body: '{"title":' })
    } else if (roll < 98) {
      await expect(service, 'no token', [401], { path: '/books' })
    } else {
      await expect(service, 'missing book', [404], { path: '/book/9007199254740991', headers: json() })
    }
  }
}

const dir = process.env.SOAK_DB_URL === undefined ? await mkdtemp(join(tmpdir(), 'soak-')) : undefined
const dbUrl = process.env.SOAK_DB_URL ?? `sqlite:${join(dir!, 'books.db')}`
// Request logs on, as a deployment runs it; they are written to /dev/null.
const service = await startService({ dbUrl, logLevel: 'info' })
const pid = service.pid
try {
  // A short warm-up first, so the starting figure is the service at work rather than at rest.
  await Promise.all(Array.from({ length: clients }, () => client(service, Date.now() + 5_000)))
  const rssStart = rssMiB(pid)
  let rssMax = rssStart
  const samples: string[] = []
  let tick = 0
  // One reading a second for the peak; ten spread over the run show whether memory levels off.
  const everyTicks = Math.max(1, Math.round((minutes * 60) / 10))
  const sampler = setInterval(() => {
    const rss = rssMiB(pid)
    rssMax = Math.max(rssMax, rss)
    if (++tick % everyTicks === 0) samples.push(rss.toFixed(0))
  }, 1000)
  const started = Date.now()
  const before = requests
  console.log(`soak: ${minutes} min, ${clients} clients, ${dbUrl.split(':')[0]} store, service pid ${pid}, RSS ${rssStart.toFixed(1)} MiB`)
  await Promise.all(Array.from({ length: clients }, () => client(service, started + minutes * 60_000)))
  clearInterval(sampler)
  const rssEnd = rssMiB(pid)
  const seconds = (Date.now() - started) / 1000
  const done = requests - before

  console.log(`requests: ${done} in ${seconds.toFixed(0)} s (${(done / seconds).toFixed(0)}/s)`)
  for (const [key, n] of [...counts].sort()) console.log(`  ${key}: ${n}`)
  console.log(`errors: ${errors.length}`)
  for (const error of errors.slice(0, 20)) console.log(`  ${error}`)
  console.log(`service RSS: start ${rssStart.toFixed(1)} MiB, end ${rssEnd.toFixed(1)} MiB, max ${rssMax.toFixed(1)} MiB`)
  console.log(`service RSS over the run (MiB): ${samples.join(' ')}`)
  process.exitCode = errors.length === 0 ? 0 : 1
} finally {
  await service.stop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
}
