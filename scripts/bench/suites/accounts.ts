/**
 * Reading a book as each kind of caller: the configured pair's token, a stored user's token, a
 * key, and a forged or a malformed token, refused, in one run so that they share the ceiling; then
 * the p99 of one client's reads while stored users log in 20 times a second, against the same
 * reads without them.
 */
import { join } from 'node:path'
import { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { postgresSection } from '../engines.ts'
import { measureSection, type Step, type StepContext } from '../measure.ts'
import { read } from '../operations.ts'
import { createBooks, login, startService, type Service, type ServiceOptions } from '../service.ts'
import type { BenchContext, Suite } from '../suites.ts'
import { percentile, timed } from '../timed.ts'

const PASSWORD = 'a quiet harbour at dawn'

async function send(service: Service, method: string, path: string, token: string | undefined, body: unknown) {
  const response = await fetch(service.baseUrl + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: token }) },
    body: JSON.stringify(body),
  })
  const envelope = (await response.json()) as { data: Record<string, unknown> }
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(envelope)}`)
  return envelope.data
}

async function userToken(service: Service, admin: string, username: string): Promise<string> {
  await send(service, 'POST', '/users', admin, { username, password: PASSWORD, role: 'reader' })
  return String((await send(service, 'POST', '/token', undefined, { username, password: PASSWORD })).token)
}

/** `read` as another caller: the same requests with another `Authorization`, refused when `refused`. */
function readAs(name: string, credential: (context: StepContext) => Promise<string>, refused = false): Step {
  return {
    name,
    workload: async (context) => {
      const workload = await read.workload(context)
      return { ...workload, headers: { authorization: await credential(context) }, refused }
    },
  }
}

const readAsUser = readAs('GET /book/{id}, a user', (context) => userToken(context.service, context.token, 'reader'))
const readWithKey = readAs('GET /book/{id}, a key', async ({ service, token }) =>
  String((await send(service, 'POST', '/keys', token, { name: 'bench', role: 'reader' })).key),
)
// What a client without a valid token sends: a token of the service's own shape whose signature
// was altered (a forgery, or a token cut or mangled on its way), and text that is no token at all.
const readWithForgedToken = readAs(
  'GET /book/{id}, a forged token',
  async ({ token }) => {
    const signature = token.lastIndexOf('.') + 1
    return `${token.slice(0, signature)}${token[signature] === 'A' ? 'B' : 'A'}${token.slice(signature + 1)}`
  },
  true,
)
const readWithMalformedToken = readAs('GET /book/{id}, a malformed token', async () => 'not-a-token', true)

/** Another client's reads, one at a time for `seconds`: their p99 and p50 in ms. */
async function reads(service: Service, token: string, ids: number[], seconds: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const times: number[] = []
  const until = performance.now() + seconds * 1000
  for (let i = 0; performance.now() < until; i++) times.push((await timed(service, `/book/${ids[i % ids.length]}`, token, agent)).ms)
  agent.destroy()
  return { p50: percentile(times, 50), p99: percentile(times, 99), reads: times.length }
}

/**
 * Logins of stored users at `perSecond` until `stop()`, each user from an address of its own as
 * people sign in from their own machines: how they were answered.
 */
async function logins(service: Service, usernames: string[], perSecond: number, stop: () => boolean) {
  const outcomes = new Map<string, number>()
  const agents = usernames.map((_, i) => new Agent({ localAddress: `127.0.0.${10 + i}` }))
  const pending: Promise<void>[] = []
  for (let i = 0; !stop(); i++) {
    const n = i % usernames.length
    const body = Buffer.from(JSON.stringify({ username: usernames[n], password: PASSWORD }))
    pending.push(
      timed(service, '/token', '', agents[n]!, { method: 'POST', body, headers: { 'content-type': 'application/json' } }).then(
        (answer) => {
          outcomes.set(String(answer.status), (outcomes.get(String(answer.status)) ?? 0) + 1)
        },
        (err: Error) => {
          outcomes.set(err.message, (outcomes.get(err.message) ?? 0) + 1)
        },
      ),
    )
    await sleep(1000 / perSecond)
  }
  await Promise.all(pending)
  for (const agent of agents) agent.destroy()
  return [...outcomes].map(([outcome, count]) => `${count} × ${outcome}`).join(', ')
}

async function underLogins(title: string, options: ServiceOptions, context: BenchContext) {
  const seconds = context.load.durationSeconds * 3
  const service = await startService({ ...options, cpus: context.serverCpus })
  try {
    const admin = await login(service)
    const ids = await createBooks(service, admin, 100)
    const usernames = Array.from({ length: 20 }, (_, i) => `user${i}`)
    for (const username of usernames) await send(service, 'POST', '/users', admin, { username, password: PASSWORD, role: 'reader' })
    await reads(service, admin, ids, 1)
    const quiet = await reads(service, admin, ids, seconds)
    let stopped = false
    const loggingIn = logins(service, usernames, 20, () => stopped)
    await sleep(1000)
    const busy = await reads(service, admin, ids, seconds)
    stopped = true
    const answers = await loggingIn
    context.log(`  ${title}: p99 ${quiet.p99.toFixed(2)} ms alone, ${busy.p99.toFixed(2)} ms while users log in (${answers})`)
    return `| ${title} | ${quiet.p50.toFixed(2)} / ${quiet.p99.toFixed(2)} | ${busy.p50.toFixed(2)} / ${busy.p99.toFixed(2)} | ${(busy.p99 - quiet.p99).toFixed(2)} | ${answers} |`
  } finally {
    await service.stop()
  }
}

const steps = [read, readAsUser, readWithKey, readWithForgedToken, readWithMalformedToken]

const suite: Suite = {
  description:
    'GET /book/{id} with a user token, a key, a forged and a malformed token against the configured pair; reads while users log in 20 times a second',
  async run(context) {
    const sqliteOptions = { dbUrl: `sqlite:${join(context.work, 'accounts.db')}` }
    const sqlite = await measureSection('SQLite', sqliteOptions, steps, context)
    const rows = [await underLogins('SQLite', { dbUrl: `sqlite:${join(context.work, 'logins.db')}` }, context)]
    const postgres = await postgresSection(
      `bench_accounts_${process.pid}`,
      async (options) => {
        const section = await measureSection('PostgreSQL', options, steps, context)
        rows.push(await underLogins('PostgreSQL', options, context))
        return section
      },
      context.log,
    )
    const table = [
      "One client's reads, one at a time: p50 / p99 in ms, alone and while 20 stored users a second log in",
      '',
      '| engine | alone | during logins | p99 rise | logins answered |',
      '|---|---:|---:|---:|---|',
      ...rows,
    ].join('\n')
    return { sections: [sqlite, postgres], tables: [table] }
  },
}
export default suite
