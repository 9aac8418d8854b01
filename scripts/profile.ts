/**
 * `npm run profile -- OPERATION [--db=postgres] [--seconds=N] [--log-level=LEVEL]`: one operation
 * of the benchmark against a service started with `node --cpu-prof`, loaded by wrk pinned as in
 * the benchmark; the profile is written under bench/profiles/ for Chrome's DevTools or
 * `npx speedscope`, and summed up by where the CPU went (see scripts/bench/profile-shares.ts).
 * OPERATION is a name from scripts/bench/operations.ts: login, read, list, update, insert,
 * insert-unlike (books unlike each other), remove.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { createDatabase, dropDatabase } from './bench/postgres.ts'
import * as operations from './bench/operations.ts'
import { createBooks, login, startService } from './bench/service.ts'
import { wrk, type Run } from './bench/wrk.ts'
import { BOOKS, type Step } from './bench/measure.ts'
import { profileShares } from './bench/profile-shares.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    db: { type: 'string', default: 'sqlite' },
    seconds: { type: 'string', default: '10' },
    'log-level': { type: 'string', default: 'warn' },
  },
})
const steps: Record<string, Step> = {
  login: operations.login,
  read: operations.read,
  list: operations.list,
  update: operations.update,
  insert: operations.insert,
  'insert-unlike': operations.insertDistinct,
  remove: operations.remove,
}
const step = steps[positionals[0] ?? '']
const seconds = Number(values.seconds)
if (step === undefined || !['sqlite', 'postgres'].includes(values.db) || !(seconds > 0)) {
  console.error(`usage: npm run profile -- ${Object.keys(steps).join('|')} [--db=sqlite|postgres] [--seconds=N] [--log-level=LEVEL]`)
  process.exit(2)
}

/** Longer than Node's fetch keeps an idle connection open (4 s). */
const SETUP_CONNECTIONS_CLOSED_MS = 5000

const profiles = fileURLToPath(new URL('../bench/profiles/', import.meta.url))
mkdirSync(profiles, { recursive: true })
const before = new Set(readdirSync(profiles))
const work = mkdtempSync(join(tmpdir(), 'book-profile-'))
const database = values.db === 'postgres' ? await createDatabase(`profile_${process.pid}`) : { url: `sqlite:${join(work, 'profile.db')}` }
if ('skip' in database) {
  console.error(database.skip)
  process.exit(1)
}
let run: Run | undefined
try {
  const service = await startService({
    dbUrl: database.url,
    logLevel: values['log-level'],
    cpus: '0',
    nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${profiles}`],
  })
  try {
    const token = await login(service)
    const ids = await createBooks(service, token, BOOKS)
    const load = { connections: 50, durationSeconds: seconds, runs: 1, cpus: '1' }
    const workload = await step.workload({ service, token, ids, done: [], load })
    // Node's fetch keeps the setup's connections open for 4 s; with wrk's 50 they would pass the
    // service's cap of 64 connections per address, and the service would close some of wrk's.
    await setTimeout(SETUP_CONNECTIONS_CLOSED_MS)
    const allocatedBefore = await service.allocatedBytes()
    run = await wrk(service.baseUrl, service.pid, workload, load, seconds)
    const bytes = ((await service.allocatedBytes()) - allocatedBefore) / Math.max(1, run.requests)
    console.log(
      `${step.name}: ${run.requestsPerSecond.toFixed(0)} req/s, CPU ${run.cpuMicrosecondsPerRequest.toFixed(1)} µs/request, ` +
        `${bytes.toFixed(0)} bytes allocated/request, ${run.errors} errors`,
    )
  } finally {
    await service.stop()
  }
} finally {
  if (values.db === 'postgres') await dropDatabase(`profile_${process.pid}`)
  rmSync(work, { recursive: true, force: true })
}
for (const file of readdirSync(profiles)) {
  if (before.has(file)) continue
  const { busyMs, shares, pieces } = profileShares(join(profiles, file), { lastMs: seconds * 1000 })
  console.log(`${join(profiles, file)}\nwhere ${busyMs.toFixed(0)} ms of CPU went under load:`)
  for (const [who, share] of shares) console.log(`${(share * 100).toFixed(1).padStart(6)} %  ${who}`)
  if (pieces.length === 0 || run === undefined) continue
  // Shares of the load's samples, times the CPU each request took, are each piece's CPU per request.
  console.log(`each piece of the service, its own code and what it calls (of ${run.cpuMicrosecondsPerRequest.toFixed(1)} µs/request):`)
  for (const [piece, share] of pieces) {
    console.log(`${(share * 100).toFixed(1).padStart(6)} %  ${(share * run.cpuMicrosecondsPerRequest).toFixed(2).padStart(6)} µs  ${piece}`)
  }
}
