import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import { loadMigrations } from '../src/store/migrations.ts'
import { APPLICATION_NAME } from '../src/store/postgres/migrate.ts'
import { dune, storeEngines } from './helpers.ts'
import { call, serviceEnv, login, startService, type ListeningService } from './support/service.ts'
import { adminQuery, connectAdmin, createTestSchema, type TestSchema } from './support/postgres.ts'
import { openStream } from './support/event-streams.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!
const INSTANCES = 4

/**
 * Polls until `count` sessions of the service wait to migrate: the one that holds the migration
 * lock waits for a table lock, the others ask for the migration lock again and again; false after
 * `timeoutMs`.
 */
async function sessionsWaitingToMigrate(count: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const { rows } = await adminQuery(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = $1
         AND query LIKE '%migrations%' AND (wait_event_type = 'Lock' OR query LIKE '%pg_try_advisory_lock%')`,
      [APPLICATION_NAME],
    )
    if (rows[0].waiting >= count) return true
    await setTimeout(100)
  }
  return false
}

describe('several instances on one PostgreSQL database', { skip: postgres.skip }, () => {
  let schema: TestSchema
  let instances: ListeningService[] = []
  let started: PromiseSettledResult<ListeningService>[]
  let allReachedTheGate: boolean

  before(async () => {
    schema = await createTestSchema()
    // A gate: while this transaction holds the name schema_migrations, an instance that creates
    // it waits, and so does every instance behind it. Opening the gate only once all of them
    // wait makes them race for real, however unevenly the processes started.
    const gate = await connectAdmin()
    await gate.query('BEGIN')
    await gate.query(`CREATE TABLE ${schema.name}.schema_migrations (version integer)`)
    const env = serviceEnv(schema.url)
    const starting = Promise.allSettled(Array.from({ length: INSTANCES }, () => startService(env)))
    allReachedTheGate = await sessionsWaitingToMigrate(INSTANCES, 60_000)
    await gate.query('ROLLBACK')
    await gate.end()
    started = await starting
    instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  })
  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()))
    await schema?.drop()
  })

  it('start at once on an empty database, all come up, and migrate exactly once', async () => {
    assert.ok(allReachedTheGate, 'the instances did not all reach their migrations at the same time')
    for (const result of started) {
      if (result.status === 'rejected') throw result.reason
    }
    assert.equal(new Set(instances.map((instance) => instance.url)).size, INSTANCES)
    const { rows } = await adminQuery(`SELECT version, name FROM ${schema.name}.schema_migrations ORDER BY version`)
    assert.deepEqual(
      rows,
      loadMigrations('postgres').map(({ version, name }) => ({ version, name })),
    )
  })

  it('serve the same books: created on one, read, updated and deleted on the others', async () => {
    assert.equal(instances.length, INSTANCES)
    const [first, second, third, fourth] = instances as [ListeningService, ListeningService, ListeningService, ListeningService]
    const token = await login(first)

    const created = await call(first, 'POST', '/book', { token, body: dune })
    assert.equal(created.status, 201)
    const { id } = created.body.data

    const read = await call(second, 'GET', `/book/${id}`, { token })
    assert.equal(read.status, 200)
    assert.deepEqual(read.body.data, { id, ...dune })

    const etag = read.headers.get('etag')!
    const updated = await call(third, 'PUT', `/book/${id}`, { token, body: { year: 1966 }, headers: { 'if-match': etag } })
    assert.equal(updated.status, 200)
    assert.deepEqual(updated.body.data, { id, ...dune, year: 1966 })
    const stale = await call(first, 'PUT', `/book/${id}`, { token, body: { year: 1970 }, headers: { 'if-match': etag } })
    assert.equal(stale.status, 412)

    assert.deepEqual((await call(fourth, 'GET', '/books', { token })).body.data, [{ id, ...dune, year: 1966 }])
    assert.equal((await call(fourth, 'DELETE', `/book/${id}`, { token })).status, 200)
    assert.equal((await call(second, 'GET', `/book/${id}`, { token })).status, 404)
  })

  it('carry each change made on one to the change streams of every instance, each once, in order', async (t) => {
    assert.equal(instances.length, INSTANCES)
    const token = await login(instances[0]!)
    const streams = await Promise.all(
      instances.map((instance) => openStream(Number(new URL(instance.url).port), '/books/changes?since=latest', { authorization: token })),
    )
    t.after(() => streams.forEach((stream) => stream.close()))
    await Promise.all(streams.map((stream) => stream.next((item) => item.comment !== undefined)))
    const { link } = Object.fromEntries((await call(instances[0]!, 'GET', '/books/changes?since=latest', { token })).headers)
    const since = /since=(\d+)/.exec(link!)![1]
    for (const [n, writer] of instances.entries()) await call(writer, 'POST', '/book', { token, body: { ...dune, year: n } })
    const made = (await call(instances[1]!, 'GET', `/books/changes?since=${since}`, { token })).body.data as { seq: number }[]
    assert.equal(made.length, INSTANCES)
    for (const stream of streams) {
      await stream.next((item) => item.id === String(made.at(-1)!.seq))
      assert.deepEqual(stream.changes(), made)
    }
  })

  it('accept on every instance a token issued by any one of them', async () => {
    assert.equal(instances.length, INSTANCES)
    for (const issuer of instances) {
      const token = await login(issuer)
      for (const instance of instances) {
        const res = await call(instance, 'GET', '/books', { token })
        assert.equal(res.status, 200, `token from ${issuer.url} refused by ${instance.url}`)
      }
    }
  })
})
