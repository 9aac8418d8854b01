import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, issueToken, listenOnLoopback, TEST_SECRET } from '../helpers.ts'
import { parseResponse, sendRaw } from '../raw-http.ts'

const PREVIOUS_SECRET = 'the-secret-before-the-last-rotation-0123'
const HASHES: Record<string, string> = { 256: 'sha256', 384: 'sha384', 512: 'sha512' }

const b64 = (text: string) => Buffer.from(text).toString('base64url')
const now = () => Math.floor(Date.now() / 1000)

/** A token from raw header and payload JSON text, HMAC-signed with `secret` (by the hash its alg names). */
function forge(header: string, payload: string, secret = TEST_SECRET, hash = 'sha256'): string {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`
}

function sign(header: object, claims: object, secret = TEST_SECRET): string {
  const { alg } = header as { alg?: unknown }
  const name = typeof alg === 'string' ? alg : ''
  return forge(JSON.stringify(header), JSON.stringify(claims), secret, HASHES[name.slice(-3)] ?? 'sha256')
}

const good = () => ({ sub: 'librarian', iat: now(), exp: now() + 600 })
const HS256 = { alg: 'HS256', typ: 'JWT' }

function tamper(token: string, part: 0 | 1, change: (json: Record<string, unknown>) => void): string {
  const parts = token.split('.')
  const json = JSON.parse(Buffer.from(parts[part]!, 'base64url').toString())
  change(json)
  parts[part] = b64(JSON.stringify(json))
  return parts.join('.')
}

/** A correctly signed, unexpired token of exactly `length` characters. */
function paddedToken(length: number): string {
  const bare = sign(HS256, { ...good(), pad: '' }).length
  for (let pad = Math.floor(((length - bare) * 3) / 4) - 3; ; pad++) {
    const token = sign(HS256, { ...good(), pad: 'x'.repeat(pad) })
    if (token.length >= length) return token
  }
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** The parts with part `at`'s last character changed in a bit that decoders ignore: the same bytes, spelt differently. */
function lowBitsChanged(parts: string[], at: number): string {
  const changed = [...parts]
  const part = changed[at]!
  const last = BASE64URL.indexOf(part.at(-1)!)
  changed[at] = part.slice(0, -1) + BASE64URL[last ^ 1]
  assert.deepEqual(Buffer.from(changed[at], 'base64url'), Buffer.from(part, 'base64url'))
  return changed.join('.')
}

function attacks(): Array<[string, string]> {
  const valid = sign(HS256, good())
  const [h, p, s] = valid.split('.') as [string, string, string]
  const cases: Array<[string, string]> = []
  for (const none of ['none', 'None', 'NONE', 'nOnE']) {
    cases.push([`alg ${none}, no signature`, `${b64(JSON.stringify({ alg: none, typ: 'JWT' }))}.${p}.`])
    cases.push([`alg ${none}, HMAC signature`, sign({ alg: none, typ: 'JWT' }, good())])
  }
  for (const alg of ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'EdDSA']) {
    cases.push([`${alg} signed with the secret as an HMAC key`, sign({ alg, typ: 'JWT' }, good())])
  }
  for (const alg of ['hs256', 'HS1', 'HS257', '', 'HS256 ']) cases.push([`alg ${JSON.stringify(alg)}`, sign({ alg, typ: 'JWT' }, good())])
  cases.push(['alg missing', sign({ typ: 'JWT' }, good())])
  cases.push(['alg as an array', forge('{"alg":["HS256"],"typ":"JWT"}', JSON.stringify(good()))])
  cases.push(['an embedded public key', sign({ alg: 'RS256', jwk: { kty: 'oct', k: b64(TEST_SECRET) } }, good())])
  cases.push(['wrong secret', sign(HS256, good(), 'not-the-secret-but-just-as-long-as-it')])
  cases.push(['random secret', sign(HS256, good(), randomBytes(32).toString('hex'))])
  cases.push(['empty secret', sign(HS256, good(), '')])
  cases.push(['payload tampered', tamper(valid, 1, (claims) => (claims.sub = 'admin'))])
  cases.push(['exp extended', tamper(valid, 1, (claims) => (claims.exp = now() + 86_400))])
  cases.push(['header alg switched to HS512', tamper(valid, 0, (header) => (header.alg = 'HS512'))])
  for (const [alg, hash] of [
    ['HS512', 'sha256'],
    ['HS256', 'sha384'],
    ['HS384', 'sha512'],
  ]) {
    cases.push([
      `alg ${alg} over a signature made with ${hash}`,
      forge(JSON.stringify({ alg, typ: 'JWT' }), JSON.stringify(good()), TEST_SECRET, hash),
    ])
  }
  cases.push(['header alg switched to none', tamper(valid, 0, (header) => (header.alg = 'none'))])
  cases.push(['signature of another token', `${h}.${sign(HS256, { ...good(), sub: 'x' }).split('.')[1]}.${s}`])
  cases.push(['signature flipped', `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`])
  cases.push(['signature missing', `${h}.${p}.`])
  for (const [name, at] of [
    ['signature', 2],
    ['header', 0],
    ['payload', 1],
  ] as const) {
    const parts = [h, p, s]
    if (parts[at]!.length % 4 === 0) continue
    cases.push([`${name} differing only in the unused low bits of its last character`, lowBitsChanged(parts, at)])
  }
  cases.push(['signature truncated', `${h}.${p}.${s.slice(0, 20)}`])
  cases.push(['exp missing', sign(HS256, { sub: 'librarian', iat: now() })])
  cases.push(['exp a string', sign(HS256, { ...good(), exp: String(now() + 600) })])
  cases.push(['exp null', sign(HS256, { ...good(), exp: null })])
  cases.push(['exp an object', sign(HS256, { ...good(), exp: { valueOf: now() + 600 } })])
  cases.push(['exp an array', sign(HS256, { ...good(), exp: [now() + 600] })])
  cases.push(['exp true', sign(HS256, { ...good(), exp: true })])
  cases.push(['expired', sign(HS256, { ...good(), iat: now() - 1000, exp: now() - 100 })])
  cases.push(['expired a second ago', sign(HS256, { ...good(), exp: now() - 1 })])
  cases.push(['nbf in the future', sign(HS256, { ...good(), nbf: now() + 300 })])
  cases.push(['nbf a string', sign(HS256, { ...good(), nbf: 'later' })])
  cases.push(['iat a string', sign(HS256, { ...good(), iat: 'now' })])
  cases.push(['exp beyond any number (1e400)', forge(JSON.stringify(HS256), `{"sub":"librarian","exp":1e400}`)])
  cases.push(['nbf of minus infinity (-1e400)', forge(JSON.stringify(HS256), `{"exp":${now() + 600},"nbf":-1e400}`)])
  cases.push(['one part', h])
  cases.push(['two parts', `${h}.${p}`])
  cases.push(['four parts', `${valid}.${s}`])
  cases.push(['five parts', `${valid}.${s}.${s}`])
  cases.push(['empty parts', '..'])
  cases.push(['just dots', '....'])
  cases.push(['leading dot', `.${valid}`])
  cases.push(['trailing dot', `${valid}.`])
  cases.push(['standard base64 padding', `${Buffer.from(JSON.stringify(HS256)).toString('base64')}==.${p}.${s}`])
  cases.push(['base64 with +/', `${h}.${p}.${s.replace(/-/g, '+').replace(/_/g, '/')}+/`])
  cases.push(['characters outside base64url', `${h}.${p.slice(0, 10)}*!${p.slice(10)}.${s}`])
  cases.push(['a space inside', `${h}.${p.slice(0, 10)} ${p.slice(10)}.${s}`])
  cases.push(['header not JSON', forge('{alg:HS256}', JSON.stringify(good()))])
  cases.push(['payload not JSON', forge(JSON.stringify(HS256), '{"exp":')])
  cases.push(['payload not UTF-8', `${h}.${Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url')}.${s}`])
  for (const notObject of ['[]', '[{"alg":"HS256"}]', '"HS256"', '1', 'null', 'true']) {
    cases.push([`header ${notObject}`, forge(notObject, JSON.stringify(good()))])
    cases.push([`payload ${notObject}`, forge(JSON.stringify(HS256), notObject)])
  }
  cases.push(['__proto__ in the payload', forge(JSON.stringify(HS256), `{"__proto__":{"exp":${now() + 600}},"sub":"x"}`)])
  cases.push(['a signed token just over 8 KiB', paddedToken(8 * 1024 + 1)])
  cases.push(['a signed token of 15 KiB', paddedToken(15 * 1024)])
  cases.push(['huge nonsense', 'a'.repeat(12_000)])
  cases.push(['deeply nested payload', forge(JSON.stringify(HS256), `${'{"a":'.repeat(1500)}1${'}'.repeat(1500)}`)])
  cases.push(['Bearer with alg none', `Bearer ${b64('{"alg":"none"}')}.${p}.`])
  cases.push(['Bearer twice', `Bearer Bearer ${valid}`])
  cases.push(['another scheme', `Basic ${valid}`])
  return cases
}

describe('token attacks', () => {
  let app: FastifyInstance

  before(async () => {
    app = await buildTestApp({ previousSecret: PREVIOUS_SECRET })
  })
  after(() => app.close())

  const getBooks = (authorization: string) => app.inject({ method: 'GET', url: '/books', headers: { authorization } })

  it('accepts the tokens it issues, and HS256/384/512 tokens signed with either secret', async () => {
    assert.equal((await getBooks(await issueToken(app))).statusCode, 200)
    for (const alg of ['HS256', 'HS384', 'HS512']) {
      for (const secret of [TEST_SECRET, PREVIOUS_SECRET]) {
        const res = await getBooks(sign({ alg, typ: 'JWT' }, good(), secret))
        assert.equal(res.statusCode, 200, `${alg} ${secret}`)
      }
    }
    assert.equal((await getBooks(`bearer ${sign(HS256, good())}`)).statusCode, 200)
  })

  for (const [name, token] of attacks()) {
    it(`refuses ${name}`, async () => {
      const res = await getBooks(token)
      assert.equal(res.statusCode, 401)
      assert.deepEqual(res.json(), { status: 401, message: 'Invalid token', data: null })
    })
  }

  it('refuses a remembered valid token once it has expired', async (t) => {
    // The clock is mocked before the service is built, so every reader of it sees the mock.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() })
    const service = await buildTestApp()
    t.after(() => service.close())
    const read = (authorization: string) => service.inject({ method: 'GET', url: '/books', headers: { authorization } })
    const exp = now() + 2
    const token = sign(HS256, { sub: 'librarian', iat: now(), exp })
    assert.equal((await read(token)).statusCode, 200)
    assert.equal((await read(token)).statusCode, 200)
    t.mock.timers.tick(exp * 1000 - Date.now() + 50)
    assert.equal((await read(token)).statusCode, 401)
  })

  it('does not accept the previous secret once it is no longer configured', async () => {
    const current = await buildTestApp()
    const res = await current.inject({ method: 'GET', url: '/books', headers: { authorization: sign(HS256, good(), PREVIOUS_SECRET) } })
    assert.equal(res.statusCode, 401)
    await current.close()
  })

  it('refuses a 15 KiB token sent over a real socket with 401, not a parser error', async () => {
    const port = await listenOnLoopback(app)
    const token = paddedToken(15 * 1024)
    assert.ok(token.length >= 15 * 1024 && token.length < 15 * 1024 + 8)
    const raw = await sendRaw(port, `GET /books HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nConnection: close\r\n\r\n`)
    const res = parseResponse(raw)
    assert.equal(res.status, 401)
    assert.deepEqual(JSON.parse(res.body.toString()), { status: 401, message: 'Invalid token', data: null })
  })
})
