import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { BookCatalogue } from '../src/index.ts'
import { serviceFor, storeEngines, TEST_USERNAME } from './support/service.ts'

const ada = { username: 'ada', password: 'a quiet harbour at dawn', role: 'editor' } as const

/** Revocation reaches every instance within a second: this waits for it, well beyond. */
async function eventually(check: () => Promise<void>): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    try {
      return await check()
    } catch (err) {
      if (waited > 5000) throw err
      await sleep(100)
    }
  }
}

for (const engine of storeEngines) {
  describe(`the client's users and keys (${engine.name})`, { skip: engine.skip }, () => {
    it('an admin creates, lists, changes and deletes users; a user signs in and changes their own password', async (t) => {
      const service = await serviceFor(t, engine)
      const admin = await service.admin()
      const created = await admin.users.create(ada)
      assert.deepEqual({ ...created, created: typeof created.created }, { username: 'ada', role: 'editor', created: 'string' })
      assert.deepEqual(
        (await admin.users.list()).map((user) => [user.username, user.role]),
        [
          [TEST_USERNAME, 'admin'],
          ['ada', 'editor'],
        ],
      )
      assert.deepEqual(await admin.users.get('ADA'), created)
      await assert.rejects(admin.users.create(ada), { name: 'ApiError', status: 409, message: 'User already exists' })

      const user = new BookCatalogue({ url: service.url })
      await user.login('ada', ada.password)
      await user.books.create({ title: 'Dune', author: 'Frank Herbert', year: 1965 })
      await assert.rejects(user.users.list(), { status: 403, message: 'Forbidden' })
      await assert.rejects(user.users.update('ada', { password: 'another quiet harbour', current_password: 'wrong one, surely' }), {
        status: 401,
        message: 'Invalid credentials',
      })
      await user.users.update('ada', { password: 'another quiet harbour', current_password: ada.password })
      await user.login('ada', 'another quiet harbour')

      assert.equal((await admin.users.update('ada', { role: 'reader' })).role, 'reader')
      await admin.users.delete('ada')
      await assert.rejects(admin.users.get('ada'), { status: 404, message: 'User not found' })
    })

    it("keys: created in the caller's role or lower, shown once, listed without the key, revoked", async (t) => {
      const service = await serviceFor(t, engine)
      const admin = await service.admin()
      const reading = await admin.keys.create({ name: 'dashboard', role: 'reader', expires_in_days: 30 })
      assert.match(reading.key, /^bk_/)
      assert.equal(reading.role, 'reader')
      const listed = await admin.keys.list()
      assert.deepEqual(
        listed.map((key) => [key.id, key.name, key.owner, 'key' in key]),
        [[reading.id, 'dashboard', TEST_USERNAME, false]],
      )
      const program = new BookCatalogue({ url: service.url, key: reading.key })
      assert.deepEqual(await program.books.find().all(), [])
      await assert.rejects(program.books.create({ title: 'Dune', author: 'Frank Herbert', year: 1965 }), {
        status: 403,
        message: 'Forbidden',
      })
      await assert.rejects(program.keys.create({ name: 'higher', role: 'editor' }), { status: 403, message: 'Forbidden' })
      await admin.keys.revoke(reading.id)
      await assert.rejects(admin.keys.revoke(reading.id), { status: 404, message: 'Key not found' })
      await eventually(() => assert.rejects(program.books.find().all(), { status: 401, message: 'Invalid token' }))
    })
  })
}
