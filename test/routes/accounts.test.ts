import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createSigner } from 'fast-jwt'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { assertEnvelope, buildTestApp, dune, issueToken, storeEngines, TEST_SECRET, TEST_USERNAME, withToken } from '../helpers.ts'

const PASSWORD = 'a quiet harbour at dawn'

/** An admin's calls, and a way to sign in as another user. */
async function start(t: { after(fn: () => unknown): void }, overrides: { dbUrl?: string } = {}, openStore?: () => Promise<never>) {
  const app = await buildTestApp(overrides, openStore ? { store: await openStore() } : {})
  t.after(() => app.close())
  return session(app)
}

async function session(app: FastifyInstance) {
  const admin = await issueToken(app)
  const as = (token: string) => (options: InjectOptions) => app.inject(withToken(token, options))
  const login = async (username: string, password = PASSWORD) =>
    app.inject({ method: 'POST', url: '/token', payload: { username, password } })
  const tokenOf = async (username: string, password = PASSWORD) => {
    const res = await login(username, password)
    assert.equal(res.statusCode, 200, res.body)
    return res.json().data.token as string
  }
  const addUser = async (username: string, role: string) =>
    assertEnvelope(
      await as(admin)({ method: 'POST', url: '/users', payload: { username, password: PASSWORD, role } }),
      201,
      'User created successfully',
    )
  return { app, admin: as(admin), as, login, tokenOf, addUser }
}

for (const engine of storeEngines) {
  describe(`accounts (${engine.name})`, { skip: engine.skip }, () => {
    const open = () => engine.open() as Promise<never>

    it('POST /users: 201 with the user; its name is taken whatever the case, and the configured one too', async (t) => {
      const { admin, addUser } = await start(t, {}, open)
      const user = (await addUser('Ada.L', 'editor')) as { username: string; role: string; created: string }
      assert.deepEqual(Object.keys(user).sort(), ['created', 'role', 'username'])
      assert.deepEqual({ username: user.username, role: user.role }, { username: 'Ada.L', role: 'editor' })
      assert.ok(Math.abs(Date.parse(user.created) - Date.now()) < 60_000)
      for (const username of ['ada.l', 'ADA.L', TEST_USERNAME.toUpperCase()]) {
        const res = await admin({ method: 'POST', url: '/users', payload: { username, password: PASSWORD, role: 'reader' } })
        assertEnvelope(res, 409, 'User already exists', null)
      }
    })

    it('POST /users refuses a malformed body, an unknown role, a bad name and a weak password: 400 Invalid input', async (t) => {
      const { admin } = await start(t, {}, open)
      for (const payload of [
        '{',
        [],
        { username: 'ada', password: PASSWORD },
        { username: 'ada', password: PASSWORD, role: 'owner' },
        { username: '', password: PASSWORD, role: 'reader' },
        { username: 'a'.repeat(65), password: PASSWORD, role: 'reader' },
        { username: 'ada lovelace', password: PASSWORD, role: 'reader' },
        { username: 'ada/1', password: PASSWORD, role: 'reader' },
        { username: 'ada', password: 'short', role: 'reader' },
        { username: 'ada', password: 'x'.repeat(1025), role: 'reader' },
        { username: 'ada', password: 'aaaaaaaaaaaaaaaa', role: 'reader' },
        { username: 'ada', password: 'password1234', role: 'reader' },
        { username: 'ada', password: 'ada-ada-ada-ada-1', role: 'reader' },
        { username: 'ada', password: 12345678901234, role: 'reader' },
      ]) {
        const res = await admin({ method: 'POST', url: '/users', payload: payload as object })
        assertEnvelope(res, 400, 'Invalid input', null)
      }
      assertEnvelope(await admin({ method: 'GET', url: '/users' }), 200, 'Users retrieved successfully', [
        { username: TEST_USERNAME, role: 'admin', created: null },
      ])
    })

    it('GET /users and GET /user/{username}: the configured user first, then the others; 404 User not found', async (t) => {
      const { admin, addUser } = await start(t, {}, open)
      await addUser('grace', 'reader')
      await addUser('Ada', 'editor')
      const users = assertEnvelope(await admin({ method: 'GET', url: '/users' }), 200, 'Users retrieved successfully') as {
        username: string
      }[]
      assert.deepEqual(
        users.map((user) => user.username),
        [TEST_USERNAME, 'Ada', 'grace'],
      )
      const one = assertEnvelope(await admin({ method: 'GET', url: '/user/ADA' }), 200, 'User retrieved successfully') as { role: string }
      assert.equal(one.role, 'editor')
      assertEnvelope(await admin({ method: 'GET', url: `/user/${TEST_USERNAME}` }), 200, 'User retrieved successfully', {
        username: TEST_USERNAME,
        role: 'admin',
        created: null,
      })
      assertEnvelope(await admin({ method: 'GET', url: '/user/nobody' }), 404, 'User not found', null)
    })

    it('a user signs in with their password and acts in their role; a wrong password or name is 401', async (t) => {
      const { as, addUser, login, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'reader')
      const reader = as(await tokenOf('ADA'))
      assertEnvelope(await reader({ method: 'GET', url: '/books' }), 200, 'Books retrieved successfully', [])
      assertEnvelope(await reader({ method: 'POST', url: '/book', payload: dune }), 403, 'Forbidden', null)
      assertEnvelope(await login('ada', 'not the password at all'), 401, 'Invalid credentials', null)
      assertEnvelope(await login('nobody', PASSWORD), 401, 'Invalid credentials', null)
    })

    it("an editor's changes carry their name in the history; a key's carry key:<name>", async (t) => {
      const { as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'editor')
      const ada = as(await tokenOf('ada'))
      const { id } = assertEnvelope(await ada({ method: 'POST', url: '/book', payload: dune }), 201, 'Book created successfully') as {
        id: number
      }
      const created = assertEnvelope(
        await ada({ method: 'POST', url: '/keys', payload: { name: 'nightly', role: 'editor' } }),
        201,
        'Key created successfully',
      ) as {
        key: string
      }
      const key = as(created.key)
      assertEnvelope(await key({ method: 'PUT', url: `/book/${id}`, payload: { year: 1966 } }), 200, 'Book updated successfully')
      const history = (await ada({ method: 'GET', url: `/book/${id}/history` })).json().data as { actor: string }[]
      assert.deepEqual(
        history.map((change) => change.actor),
        ['key:nightly', 'ada'],
      )
    })

    it('PUT /user/{username}: an admin changes role and password; tokens issued before stop working at once', async (t) => {
      const { admin, as, addUser, login, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'reader')
      const before = as(await tokenOf('ada'))
      const res = await admin({ method: 'PUT', url: '/user/ada', payload: { role: 'editor' } })
      assertEnvelope(res, 200, 'User updated successfully')
      assert.equal(res.json().data.role, 'editor')
      assertEnvelope(await before({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      const editor = as(await tokenOf('ada'))
      assertEnvelope(await editor({ method: 'POST', url: '/book', payload: dune }), 201, 'Book created successfully')
      assertEnvelope(
        await admin({ method: 'PUT', url: '/user/ada', payload: { password: 'a new and better passphrase' } }),
        200,
        'User updated successfully',
      )
      assertEnvelope(await editor({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      assertEnvelope(await login('ada'), 401, 'Invalid credentials', null)
      assertEnvelope(await login('ada', 'a new and better passphrase'), 200, 'Token generated successfully')
      assertEnvelope(await admin({ method: 'PUT', url: '/user/nobody', payload: { role: 'editor' } }), 404, 'User not found', null)
      for (const payload of [{}, { role: 'owner' }, { password: 'short' }, { password: 'aaaaaaaaaaaaaaaa' }]) {
        assertEnvelope(await admin({ method: 'PUT', url: '/user/ada', payload }), 400, 'Invalid input', null)
      }
    })

    it('PUT /user/{own name}: anyone changes their own password with the current one, and nothing else', async (t) => {
      const { as, addUser, login, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'reader')
      await addUser('grace', 'reader')
      const ada = as(await tokenOf('ada'))
      const next = 'another long passphrase'
      assertEnvelope(
        await ada({ method: 'PUT', url: '/user/ada', payload: { password: next, current_password: 'wrong wrong wrong' } }),
        401,
        'Invalid credentials',
        null,
      )
      assertEnvelope(await ada({ method: 'PUT', url: '/user/ada', payload: { password: next } }), 400, 'Invalid input', null)
      assertEnvelope(await ada({ method: 'PUT', url: '/user/ada', payload: { role: 'admin' } }), 403, 'Forbidden', null)
      assertEnvelope(
        await ada({ method: 'PUT', url: '/user/grace', payload: { password: next, current_password: PASSWORD } }),
        403,
        'Forbidden',
        null,
      )
      const changed = await ada({ method: 'PUT', url: '/user/ada', payload: { password: next, current_password: PASSWORD } })
      assertEnvelope(changed, 200, 'User updated successfully')
      assertEnvelope(await ada({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      assertEnvelope(await login('ada', next), 200, 'Token generated successfully')
    })

    it('DELETE /user/{username}: gone with their keys and tokens; the configured user cannot be changed or removed', async (t) => {
      const { admin, as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'editor')
      const ada = as(await tokenOf('ada'))
      const { key } = (await ada({ method: 'POST', url: '/keys', payload: { name: 'k', role: 'reader' } })).json().data as { key: string }
      assertEnvelope(await admin({ method: 'DELETE', url: '/user/Ada' }), 200, 'User deleted successfully', null)
      assertEnvelope(await ada({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      assertEnvelope(await as(key)({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      assertEnvelope(await admin({ method: 'GET', url: '/keys' }), 200, 'Keys retrieved successfully', [])
      assertEnvelope(await admin({ method: 'DELETE', url: '/user/ada' }), 404, 'User not found', null)
      assertEnvelope(await admin({ method: 'DELETE', url: `/user/${TEST_USERNAME}` }), 403, 'Forbidden', null)
      assertEnvelope(await admin({ method: 'PUT', url: `/user/${TEST_USERNAME}`, payload: { role: 'reader' } }), 403, 'Forbidden', null)
    })

    it("POST /keys: shown once, sent like a token, in the role asked up to the caller's own; 403 above it", async (t) => {
      const { as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'editor')
      const ada = as(await tokenOf('ada'))
      assertEnvelope(await ada({ method: 'POST', url: '/keys', payload: { name: 'too much', role: 'admin' } }), 403, 'Forbidden', null)
      for (const payload of [
        { name: '', role: 'reader' },
        { name: '   ', role: 'reader' },
        { name: 'x'.repeat(101), role: 'reader' },
        { name: 'k', role: 'owner' },
        { name: 'k', role: 'reader', expires_in_days: 0 },
        { name: 'k', role: 'reader', expires_in_days: 3651 },
        { role: 'reader' },
      ]) {
        assertEnvelope(await ada({ method: 'POST', url: '/keys', payload }), 400, 'Invalid input', null)
      }
      const res = await ada({ method: 'POST', url: '/keys', payload: { name: 'reports', role: 'reader', expires_in_days: 30 } })
      const created = assertEnvelope(res, 201, 'Key created successfully') as Record<string, unknown>
      assert.deepEqual(Object.keys(created).sort(), ['created', 'expires', 'id', 'key', 'name', 'role'])
      assert.match(String(created.key), /^bk_[A-Za-z0-9_-]{43}$/)
      assert.ok(Math.abs(Date.parse(String(created.expires)) - (Date.now() + 30 * 86_400_000)) < 60_000)
      for (const authorization of [String(created.key), `Bearer ${String(created.key)}`]) {
        const key = as(authorization)
        assertEnvelope(await key({ method: 'GET', url: '/books' }), 200, 'Books retrieved successfully')
        assertEnvelope(await key({ method: 'POST', url: '/book', payload: dune }), 403, 'Forbidden', null)
      }
      assertEnvelope(await as(`${String(created.key)}x`)({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      // A key is never renewed.
      assertEnvelope(await as(String(created.key))({ method: 'POST', url: '/token/refresh' }), 401, 'Invalid token', null)
    })

    it("GET /keys and DELETE /key/{id}: each their own, an admin everyone's; never the key itself; revoked at once", async (t) => {
      const { admin, as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'editor')
      await addUser('grace', 'editor')
      const ada = as(await tokenOf('ada'))
      const grace = as(await tokenOf('grace'))
      const adaKey = (await ada({ method: 'POST', url: '/keys', payload: { name: 'a', role: 'editor' } })).json().data as {
        id: number
        key: string
      }
      const graceKey = (await grace({ method: 'POST', url: '/keys', payload: { name: 'g', role: 'reader' } })).json().data as { id: number }
      await as(adaKey.key)({ method: 'GET', url: '/books' })
      const own = assertEnvelope(await ada({ method: 'GET', url: '/keys' }), 200, 'Keys retrieved successfully') as Record<
        string,
        unknown
      >[]
      assert.deepEqual(
        own.map((key) => Object.keys(key).sort()),
        [['created', 'expires', 'id', 'last_used', 'name', 'owner', 'role']],
      )
      assert.deepEqual(
        { ...own[0], created: undefined, last_used: undefined },
        { id: adaKey.id, name: 'a', role: 'editor', owner: 'ada', expires: null, created: undefined, last_used: undefined },
      )
      assert.ok(Math.abs(Date.parse(String(own[0]!.last_used)) - Date.now()) < 60_000, 'last used just now')
      const all = assertEnvelope(await admin({ method: 'GET', url: '/keys' }), 200, 'Keys retrieved successfully') as { id: number }[]
      assert.deepEqual(
        all.map((key) => key.id),
        [adaKey.id, graceKey.id],
      )
      assertEnvelope(await ada({ method: 'DELETE', url: `/key/${graceKey.id}` }), 404, 'Key not found', null)
      for (const id of ['999999', 'abc', '0'])
        assertEnvelope(await ada({ method: 'DELETE', url: `/key/${id}` }), 404, 'Key not found', null)
      assertEnvelope(await ada({ method: 'DELETE', url: `/key/${adaKey.id}` }), 200, 'Key revoked successfully', null)
      assertEnvelope(await as(adaKey.key)({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      assertEnvelope(await admin({ method: 'DELETE', url: `/key/${graceKey.id}` }), 200, 'Key revoked successfully', null)
    })

    it("a key acts in its owner's role once that is lower than its own", async (t) => {
      const { admin, as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'editor')
      const { key } = (await as(await tokenOf('ada'))({ method: 'POST', url: '/keys', payload: { name: 'k', role: 'editor' } })).json()
        .data as { key: string }
      await admin({ method: 'PUT', url: '/user/ada', payload: { role: 'reader' } })
      assertEnvelope(await as(key)({ method: 'POST', url: '/book', payload: dune }), 403, 'Forbidden', null)
      assertEnvelope(await as(key)({ method: 'GET', url: '/books' }), 200, 'Books retrieved successfully')
    })

    it('POST /token/refresh: a fresh token for the same user and role, until 12 hours after the password', async (t) => {
      const { app, as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'editor')
      const token = await tokenOf('ada')
      const res = await as(token)({ method: 'POST', url: '/token/refresh' })
      const { token: fresh } = assertEnvelope(res, 200, 'Token generated successfully') as { token: string }
      assert.equal(res.headers['cache-control'], 'no-store')
      const claims = JSON.parse(Buffer.from(fresh.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
      const first = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
      assert.deepEqual([claims.sub, claims.role, claims.auth_time], ['ada', 'editor', first.auth_time])
      assertEnvelope(await as(fresh)({ method: 'POST', url: '/book', payload: dune }), 201, 'Book created successfully')
      // A token whose password was given more than 12 hours ago, signed as the service signs.
      const now = Math.floor(Date.now() / 1000)
      const sign = createSigner({ key: TEST_SECRET, algorithm: 'HS256' })
      const old = sign({ ...first, auth_time: now - 12 * 3600 - 5, iat: now, exp: now + 900 })
      assertEnvelope(await as(old)({ method: 'GET', url: '/books' }), 200, 'Books retrieved successfully')
      assertEnvelope(await as(old)({ method: 'POST', url: '/token/refresh' }), 401, 'Invalid token', null)
      const configured = await issueToken(app)
      assertEnvelope(await as(configured)({ method: 'POST', url: '/token/refresh' }), 200, 'Token generated successfully')
      assertEnvelope(await app.inject({ method: 'POST', url: '/token/refresh' }), 401, 'Authorization token required', null)
    })

    it("a token forged with another user's name or a higher role fails its signature: 401", async (t) => {
      const { as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('ada', 'reader')
      const token = await tokenOf('ada')
      const [head, body, signature] = token.split('.')
      const claims = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>
      for (const forged of [
        { ...claims, role: 'admin' },
        { ...claims, sub: TEST_USERNAME },
      ]) {
        const text = `${head}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${signature}`
        assertEnvelope(await as(text)({ method: 'GET', url: '/books' }), 401, 'Invalid token', null)
      }
    })

    it('every role against every route: 403 below the role the route needs, never for one at or above it', async (t) => {
      const { admin, as, addUser, tokenOf } = await start(t, {}, open)
      await addUser('reading', 'reader')
      await addUser('editing', 'editor')
      await addUser('other', 'reader')
      const adminToken = ((await admin({ method: 'POST', url: '/token/refresh' })).json().data as { token: string }).token
      const tokens = { reader: await tokenOf('reading'), editor: await tokenOf('editing'), admin: adminToken }
      const { id } = (await admin({ method: 'POST', url: '/book', payload: dune })).json().data as { id: number }
      const routes: [string, string, 'reader' | 'editor' | 'admin', object?][] = [
        ['GET', '/books', 'reader'],
        ['GET', `/book/${id}`, 'reader'],
        ['GET', '/books/export', 'reader'],
        ['GET', `/book/${id}/history`, 'reader'],
        ['GET', '/books/changes', 'reader'],
        ['GET', '/keys', 'reader'],
        ['POST', '/keys', 'reader', { name: 'k', role: 'reader' }],
        ['PUT', '/user/reading', 'reader', { password: 'x' }],
        ['POST', '/book', 'editor', dune],
        ['PUT', `/book/${id}`, 'editor', { year: 1 }],
        ['POST', '/books/import', 'editor', []],
        ['GET', '/books/trash', 'editor'],
        ['POST', `/book/${id}/restore`, 'editor'],
        ['POST', `/book/${id}/revert`, 'editor', { seq: 1 }],
        ['GET', '/users', 'admin'],
        ['GET', '/user/reading', 'admin'],
        ['POST', '/users', 'admin', { username: 'x', password: 'y', role: 'reader' }],
        ['PUT', '/user/other', 'admin', { role: 'editor' }],
        ['DELETE', '/user/nobody', 'admin'],
        ['DELETE', `/books/trash/${id}`, 'admin'],
        ['DELETE', `/book/${id + 100}`, 'editor'],
      ]
      const order = ['reader', 'editor', 'admin']
      for (const [method, url, needs, payload] of routes) {
        for (const role of ['reader', 'editor', 'admin'] as const) {
          const res = await as(tokens[role])({ method: method as 'GET', url, ...(payload !== undefined && { payload }) })
          const allowed = order.indexOf(role) >= order.indexOf(needs)
          if (allowed) assert.notEqual(res.statusCode, 403, `${role} ${method} ${url}: ${res.body}`)
          else assertEnvelope(res, 403, 'Forbidden', null)
        }
        assertEnvelope(await as('nonsense')({ method: method as 'GET', url }), 401, 'Invalid token', null)
      }
    })

    it("a revoked key and a deleted user's token are refused by another instance on the same store within 1 s", async (t) => {
      const database = await engine.freshDatabase()
      const first = await session(await buildTestApp({ dbUrl: database.dbUrl }))
      const second = await session(await buildTestApp({ dbUrl: database.dbUrl }))
      t.after(async () => {
        await Promise.all([first.app.close(), second.app.close()])
        await database.drop()
      })
      await first.addUser('ada', 'editor')
      const token = await first.tokenOf('ada')
      const { id, key } = (await first.as(token)({ method: 'POST', url: '/keys', payload: { name: 'k', role: 'reader' } })).json().data as {
        id: number
        key: string
      }
      const accepted = async (authorization: string) =>
        (await second.as(authorization)({ method: 'GET', url: '/books' })).statusCode === 200
      const within = async (what: string, holds: () => Promise<boolean>) => {
        const started = performance.now()
        while (!(await holds())) {
          assert.ok(performance.now() - started < 1000, `${what} within 1 s`)
          await sleep(10)
        }
        return performance.now() - started
      }
      // The other instance learns of the new user and key within the same bound.
      await within('the key accepted', () => accepted(key))
      await within('the token accepted', () => accepted(token))
      assertEnvelope(await first.as(token)({ method: 'DELETE', url: `/key/${id}` }), 200, 'Key revoked successfully', null)
      const keyRefused = await within('the key refused', async () => !(await accepted(key)))
      assertEnvelope(await first.admin({ method: 'DELETE', url: '/user/ada' }), 200, 'User deleted successfully', null)
      const userRefused = await within('the token refused', async () => !(await accepted(token)))
      t.diagnostic(`refused elsewhere after ${keyRefused.toFixed(0)} ms (key) and ${userRefused.toFixed(0)} ms (user)`)
    })
  })
}
