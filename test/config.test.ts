import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { describe, it, test } from 'node:test'
import { ConfigError, DEFAULT_LIMITS, loadConfig, readEnv } from '../src/config.ts'
import { buildTestApp } from './helpers.ts'
import { temporaryDirectory } from './support/temporary.ts'

const production = {
  NODE_ENV: 'production',
  SECRET_TOKEN: 'Zq3vN8xKp2LmR7tYw5HcJ9bF4gDs6aUe',
  AUTH_USERNAME: 'librarian',
  AUTH_PASSWORD: 'a long passphrase',
}

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (err) {
    assert.ok(err instanceof ConfigError)
    return err.message
  }
  assert.fail('the configuration was accepted')
}

describe('configuration', () => {
  test('defaults: port 8080 of this machine only, ./data/books.db, log level info', () => {
    const config = loadConfig({})
    assert.equal(config.port, 8080)
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.dbUrl, 'sqlite:./data/books.db')
    assert.equal(config.logLevel, 'info')
    assert.equal(config.previousSecret, undefined)
  })

  test('PORT, HOST, DB_URL, SECRET_TOKEN, SECRET_TOKEN_PREVIOUS, AUTH_*, LOG_LEVEL are read', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DB_URL: 'sqlite::memory:',
      SECRET_TOKEN: 'current',
      SECRET_TOKEN_PREVIOUS: 'previous',
      AUTH_USERNAME: 'u',
      AUTH_PASSWORD: 'p',
      LOG_LEVEL: 'debug',
    })
    assert.deepEqual(
      [config.port, config.host, config.dbUrl, config.secret, config.previousSecret, config.username, config.password, config.logLevel],
      [0, '127.0.0.1', 'sqlite::memory:', 'current', 'previous', 'u', 'p', 'debug'],
    )
    assert.deepEqual(config.notices, [])
  })

  for (const port of ['-1', '65536', 'http', '80.5']) {
    test(`PORT=${port} is refused, naming PORT`, () => assert.match(refusal({ PORT: port }), /^PORT /))
  }

  for (const url of ['sqlite:./books.db', 'sqlite:/var/lib/books.db', 'sqlite::memory:', 'postgres://u@h/db', 'postgresql://u@h:5432/db']) {
    test(`DB_URL ${url} is accepted`, () => assert.equal(loadConfig({ DB_URL: url }).dbUrl, url))
  }

  for (const url of ['mysql://u@h/db', 'http://example.org', './books.db', 'sqlite', 'postgres:/missing-slash']) {
    test(`DB_URL ${url} is refused, naming the variable and the accepted forms`, () => {
      const message = refusal({ DB_URL: url })
      assert.match(message, /^DB_URL /)
      for (const form of ['sqlite:PATH', 'sqlite::memory:', 'postgres://', 'postgresql://']) assert.ok(message.includes(form), form)
    })
  }

  test('LOG_LEVEL outside the pino levels is refused', () => assert.match(refusal({ LOG_LEVEL: 'loud' }), /^LOG_LEVEL /))

  test('LOG_LEVEL sets the level of the service log', async () => {
    const app = await buildTestApp({ logLevel: 'warn' })
    assert.equal(app.log.level, 'warn')
    await app.close()
  })

  describe('first run with nothing configured', () => {
    test('a random secret, with a notice that tokens will not survive a restart', () => {
      const [first, second] = [loadConfig({}), loadConfig({})]
      assert.notEqual(first.secret, second.secret)
      assert.ok(Buffer.byteLength(first.secret) >= 32)
      assert.ok(first.notices.some((notice) => /SECRET_TOKEN.*restart/.test(notice)))
    })

    test('username admin and a random password, told once', () => {
      const [first, second] = [loadConfig({}), loadConfig({})]
      assert.equal(first.username, 'admin')
      assert.notEqual(first.password, second.password)
      assert.ok(first.password.length >= 12)
      assert.equal(first.notices.filter((notice) => notice.includes(first.password)).length, 1)
    })

    test('a configured username keeps a generated password', () => {
      const config = loadConfig({ AUTH_USERNAME: 'curator' })
      assert.equal(config.username, 'curator')
      assert.ok(config.notices.some((notice) => notice.includes('curator') && notice.includes(config.password)))
    })
  })

  describe('HOST', () => {
    test('production listens on every interface unless HOST says otherwise', () => {
      assert.equal(loadConfig(production).host, '0.0.0.0')
      assert.equal(loadConfig({ ...production, HOST: '10.0.0.5' }).host, '10.0.0.5')
      assert.equal(loadConfig({ HOST: '' }).host, '127.0.0.1')
    })

    const warning = (notice: string) => /^HOST=.*generated.*AUTH_PASSWORD/.test(notice)
    for (const host of ['0.0.0.0', '::', '192.0.2.7', 'books.example.org']) {
      test(`HOST=${host} with a generated password warns that the password is open to the network`, () => {
        assert.equal(loadConfig({ HOST: host }).notices.filter(warning).length, 1)
      })
    }
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', 'localhost']) {
      test(`HOST=${host}, a loopback address, does not warn`, () => {
        assert.deepEqual(loadConfig({ HOST: host }).notices.filter(warning), [])
      })
    }
    test('HOST=0.0.0.0 with AUTH_PASSWORD set does not warn', () => {
      assert.deepEqual(loadConfig({ HOST: '0.0.0.0', AUTH_PASSWORD: 'chosen' }).notices.filter(warning), [])
    })
  })

  describe('NODE_ENV=production', () => {
    test('a complete configuration starts, with nothing generated and no notices', () => {
      const config = loadConfig(production)
      assert.equal(config.production, true)
      assert.equal(config.secret, production.SECRET_TOKEN)
      assert.deepEqual(config.notices, [])
    })

    for (const name of ['SECRET_TOKEN', 'AUTH_USERNAME', 'AUTH_PASSWORD'] as const) {
      test(`a missing ${name} stops start-up, naming it`, () => {
        assert.match(refusal({ ...production, [name]: undefined }), new RegExp(`^${name} `))
        assert.match(refusal({ ...production, [name]: '' }), new RegExp(`^${name} `))
      })
    }

    test('a SECRET_TOKEN shorter than 32 bytes stops start-up', () => {
      assert.match(refusal({ ...production, SECRET_TOKEN: 's'.repeat(31) }), /^SECRET_TOKEN .*32 bytes/)
      // Bytes, not characters: sixteen two-byte characters are enough.
      const accented = 'àáâãäåæçèéêëìíîï'
      assert.equal(loadConfig({ ...production, SECRET_TOKEN: accented }).secret, accented)
    })

    test('NODE_ENV is compared without regard to case or surrounding space', () => {
      for (const spelling of ['Production', 'PRODUCTION', ' production ']) {
        assert.equal(loadConfig({ ...production, NODE_ENV: spelling }).production, true, spelling)
        assert.match(refusal({ ...production, NODE_ENV: spelling, AUTH_PASSWORD: '' }), /^AUTH_PASSWORD /)
      }
    })

    for (const [name, secret] of [
      ['one character repeated', 'a'.repeat(32)],
      ['two characters repeated', 'ab'.repeat(32)],
      ['a short piece repeated', 'Xy7#Qw2!'.repeat(4)],
      ['one multi-byte character repeated', 'é'.repeat(16)],
    ]) {
      test(`a low-entropy SECRET_TOKEN (${name}) stops start-up with one line`, () => {
        assert.match(refusal({ ...production, SECRET_TOKEN: secret! }), /^SECRET_TOKEN has too little entropy: [^\n]+$/)
        assert.match(refusal({ ...production, SECRET_TOKEN_PREVIOUS: secret! }), /^SECRET_TOKEN_PREVIOUS has too little entropy/)
      })
    }

    test('random secrets from the usual generators start', () => {
      for (const secret of [randomBytes(16).toString('hex'), randomBytes(32).toString('base64'), randomBytes(24).toString('base64url')]) {
        assert.equal(loadConfig({ ...production, SECRET_TOKEN: secret }).secret, secret)
      }
    })

    for (const [password, reason, username] of [
      ['q1', /at least 12 characters/, 'librarian'],
      ['admin', /at least 12 characters/, 'admin'],
      ['admin-admin-admin', /must not contain the username/, 'admin'],
      ['aaaaaaaaaaaaaaaa', /too repetitive/, 'librarian'],
      ['abcabcabcabcabc', /too repetitive/, 'librarian'],
      ['Password123456!', /commonly guessed/, 'librarian'],
      ['qwertyuiop1234', /commonly guessed/, 'librarian'],
    ] as const) {
      test(`AUTH_PASSWORD ${JSON.stringify(password)} for ${username} stops start-up with one line`, () => {
        const message = refusal({ ...production, AUTH_USERNAME: username, AUTH_PASSWORD: password })
        assert.match(message, /^AUTH_PASSWORD /)
        assert.match(message, reason)
        assert.doesNotMatch(message, /\n/)
        assert.ok(!message.includes(password), 'the password itself is not repeated')
      })
    }

    test('weak passwords still start outside production', () => {
      assert.equal(loadConfig({ AUTH_USERNAME: 'admin', AUTH_PASSWORD: 'admin' }).password, 'admin')
    })

    test('TRUST_PROXY=true, or a range holding every address, stops start-up with one line', () => {
      for (const trust of ['true', '0.0.0.0/0', '10.0.0.1,::/0']) {
        assert.match(refusal({ ...production, TRUST_PROXY: trust }), /^TRUST_PROXY=true [^\n]+name the proxy addresses/, trust)
      }
      assert.deepEqual(loadConfig({ ...production, TRUST_PROXY: '10.0.0.1' }).trustProxy, ['10.0.0.1'])
    })

    test('a SECRET_TOKEN_PREVIOUS shorter than 32 bytes stops start-up', () => {
      assert.match(refusal({ ...production, SECRET_TOKEN_PREVIOUS: 'short' }), /^SECRET_TOKEN_PREVIOUS /)
    })
  })

  describe('.env', () => {
    test('is read from the directory when present; real environment variables win', () => {
      const dir = temporaryDirectory('books-env-')
      writeFileSync(join(dir, '.env'), 'AUTH_USERNAME=from-file\nAUTH_PASSWORD="quoted secret"\n# a comment\nPORT=9000\n')
      const env = readEnv(dir, { PORT: '9100' })
      assert.equal(env.AUTH_USERNAME, 'from-file')
      assert.equal(env.AUTH_PASSWORD, 'quoted secret')
      assert.equal(env.PORT, '9100')
    })

    test('is optional', () => {
      const dir = temporaryDirectory('books-env-')
      assert.deepEqual(readEnv(dir, { PORT: '1' }), { PORT: '1' })
    })
  })
})

describe('database settings', () => {
  const postgresUrl = 'postgres://u@h/db'

  it('WORKERS above DB_POOL_SIZE on PostgreSQL is refused: the workers share the pool, one connection at least each', () => {
    assert.match(refusal({ DB_URL: postgresUrl, WORKERS: '4', DB_POOL_SIZE: '3' }), /^WORKERS=4 needs DB_POOL_SIZE=4 at least/)
    assert.equal(loadConfig({ DB_URL: postgresUrl, WORKERS: '4', DB_POOL_SIZE: '4' }).workers, 4)
  })

  it('WORKERS=auto on PostgreSQL starts no more workers than DB_POOL_SIZE, and says so when it holds back', () => {
    const config = loadConfig({ DB_URL: postgresUrl, WORKERS: 'auto', DB_POOL_SIZE: '1' })
    assert.equal(config.workers, 1)
    const heldBack = config.notices.filter((notice) => /^WORKERS=auto: .* so 1 workers$/.test(notice))
    assert.equal(heldBack.length, availableParallelism() > 1 ? 1 : 0)
  })

  it('SQLite has no pool to share: WORKERS may exceed DB_POOL_SIZE', () => {
    assert.equal(loadConfig({ DB_URL: 'sqlite:books.db', WORKERS: '4', DB_POOL_SIZE: '1' }).workers, 4)
  })

  it('default to a pool of 10 and timeouts that answer within 5 seconds', () => {
    const config = loadConfig({})
    assert.equal(config.dbPoolSize, 10)
    assert.equal(config.dbConnectTimeoutMs, 2000)
    assert.equal(config.dbQueryTimeoutMs, 4000)
  })

  it('are read from DB_POOL_SIZE, DB_CONNECT_TIMEOUT_MS and DB_QUERY_TIMEOUT_MS', () => {
    const config = loadConfig({ DB_POOL_SIZE: '3', DB_CONNECT_TIMEOUT_MS: '250', DB_QUERY_TIMEOUT_MS: '750' })
    assert.equal(config.dbPoolSize, 3)
    assert.equal(config.dbConnectTimeoutMs, 250)
    assert.equal(config.dbQueryTimeoutMs, 750)
  })

  for (const [name, bad] of [
    ['DB_POOL_SIZE', '0'],
    ['DB_POOL_SIZE', '1001'],
    ['DB_POOL_SIZE', 'ten'],
    ['DB_CONNECT_TIMEOUT_MS', '-5'],
    ['DB_CONNECT_TIMEOUT_MS', '1.5'],
    ['DB_QUERY_TIMEOUT_MS', '0'],
    ['DB_QUERY_TIMEOUT_MS', '4s'],
  ] as const) {
    it(`refuse ${name}=${bad}, naming the variable`, () => {
      assert.throws(
        () => loadConfig({ [name]: bad }),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError)
          assert.match(err.message, new RegExp(`^${name} must be a whole number`))
          return true
        },
      )
    })
  }

  it('accept postgres:// and postgresql:// URLs', () => {
    assert.equal(loadConfig({ DB_URL: 'postgres://db.example/books' }).dbUrl, 'postgres://db.example/books')
    assert.equal(loadConfig({ DB_URL: 'postgresql://db.example/books' }).dbUrl, 'postgresql://db.example/books')
  })
})

describe('WORKERS', () => {
  it('is 1 by default, a number when given one, and the CPU count for "auto"', () => {
    assert.equal(loadConfig({}).workers, 1)
    assert.equal(loadConfig({ WORKERS: '3' }).workers, 3)
    assert.equal(loadConfig({ WORKERS: 'auto' }).workers, availableParallelism())
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['0', '-1', '1.5', 'two', '257', ' 2']) {
      assert.throws(
        () => loadConfig({ WORKERS: raw }),
        (err: Error) => err instanceof ConfigError && /^WORKERS /.test(err.message),
        raw,
      )
    }
  })

  it('refuses more than one worker on a store that each process would have to itself', () => {
    assert.throws(() => loadConfig({ WORKERS: '2', DB_URL: 'sqlite::memory:' }), ConfigError)
    assert.equal(loadConfig({ WORKERS: '2', DB_URL: 'sqlite:./data/books.db' }).workers, 2)
  })
})

describe('SHUTDOWN_DELAY_MS', () => {
  it('is 2 s in production and 0 elsewhere by default, and any whole number of milliseconds up to 10 minutes', () => {
    assert.equal(loadConfig(production).shutdownDelayMs, 2000)
    assert.equal(loadConfig({}).shutdownDelayMs, 0)
    assert.equal(loadConfig({ ...production, SHUTDOWN_DELAY_MS: '0' }).shutdownDelayMs, 0)
    assert.equal(loadConfig({ SHUTDOWN_DELAY_MS: '600000' }).shutdownDelayMs, 600_000)
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['-1', '1.5', '2s', '600001']) {
      assert.throws(() => loadConfig({ SHUTDOWN_DELAY_MS: raw }), /SHUTDOWN_DELAY_MS must/, raw)
    }
  })
})

describe('SHUTDOWN_GRACE_MS', () => {
  it('is 10 s by default and any whole number of milliseconds up to 10 minutes', () => {
    assert.equal(loadConfig({}).shutdownGraceMs, 10_000)
    assert.equal(loadConfig({ SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs, 0)
    assert.equal(loadConfig({ SHUTDOWN_GRACE_MS: '600000' }).shutdownGraceMs, 600_000)
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['-1', '1.5', '10s', '600001']) {
      assert.throws(() => loadConfig({ SHUTDOWN_GRACE_MS: raw }), /^ConfigError: SHUTDOWN_GRACE_MS |SHUTDOWN_GRACE_MS must/, raw)
    }
  })
})

describe('TRASH_RETENTION_DAYS', () => {
  it('is 30 days by default, and any whole number of days up to 100 years, 0 purging at once', () => {
    assert.equal(loadConfig({}).trashRetentionDays, 30)
    assert.equal(loadConfig({ TRASH_RETENTION_DAYS: '0' }).trashRetentionDays, 0)
    assert.equal(loadConfig({ TRASH_RETENTION_DAYS: '36500' }).trashRetentionDays, 36_500)
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['-1', '1.5', '30d', '36501']) {
      assert.throws(() => loadConfig({ TRASH_RETENTION_DAYS: raw }), /TRASH_RETENTION_DAYS must/, raw)
    }
  })
})

describe('PASSWORD_HASH_COST', () => {
  it('is 14 by default, and 10 to 17 outside production', () => {
    assert.equal(loadConfig({}).passwordHashCost, 14)
    assert.equal(loadConfig({ PASSWORD_HASH_COST: '10' }).passwordHashCost, 10)
    assert.equal(loadConfig({ PASSWORD_HASH_COST: '17' }).passwordHashCost, 17)
  })

  it('may make hashes stronger in production, never weaker', () => {
    assert.equal(loadConfig({ ...production, PASSWORD_HASH_COST: '15' }).passwordHashCost, 15)
    assert.throws(() => loadConfig({ ...production, PASSWORD_HASH_COST: '13' }), /PASSWORD_HASH_COST must be a whole number from 14 to 17/)
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['9', '18', '14.5', 'high']) {
      assert.throws(() => loadConfig({ PASSWORD_HASH_COST: raw }), /PASSWORD_HASH_COST must/, raw)
    }
  })
})

describe('MAX_STREAMS', () => {
  it('is 1000 by default, and any whole number from 1 up to a million', () => {
    assert.equal(loadConfig({}).maxStreams, 1000)
    assert.equal(loadConfig({ MAX_STREAMS: '1' }).maxStreams, 1)
    assert.equal(loadConfig({ MAX_STREAMS: '1000000' }).maxStreams, 1_000_000)
  })

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['0', '-1', '1.5', 'many', '1000001']) {
      assert.throws(() => loadConfig({ MAX_STREAMS: raw }), /MAX_STREAMS must/, raw)
    }
  })
})

describe('hardening settings', () => {
  it('defaults: no proxy trusted, CORS off, synchronous=normal, bounded timeouts', () => {
    const config = loadConfig({})
    assert.equal(config.trustProxy, false)
    assert.deepEqual(config.corsOrigins, [])
    assert.equal(config.sqliteSynchronous, 'normal')
    assert.deepEqual(config.limits, DEFAULT_LIMITS)
    for (const value of Object.values(config.limits)) assert.ok(value > 0 && Number.isFinite(value))
  })

  it('reads TRUST_PROXY as true, false or a list of proxies', () => {
    const trustAll = loadConfig({ TRUST_PROXY: 'true' })
    assert.equal(trustAll.trustProxy, true)
    assert.ok(trustAll.notices.some((notice) => notice.startsWith('TRUST_PROXY=true')))
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false)
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,loopback,::1' }).trustProxy, [
      '10.0.0.1',
      '192.168.0.0/16',
      'loopback',
      '::1',
    ])
    assert.throws(() => loadConfig({ TRUST_PROXY: 'yes please' }), ConfigError)
    for (const bad of ['2', '10.0.0.1/33', '10.0.0', 'example.org'])
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), /TRUST_PROXY/, bad)
  })

  it('reads CORS_ORIGINS as exact origins and refuses anything else', () => {
    assert.deepEqual(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000' }).corsOrigins, [
      'https://a.example',
      'http://localhost:3000',
    ])
    for (const bad of ['*', 'https://a.example/', 'https://a.example/path', 'a.example', 'ftp://a.example', 'https://a.example,']) {
      assert.throws(() => loadConfig({ CORS_ORIGINS: bad }), /CORS_ORIGINS/, bad)
    }
  })

  it('reads SQLITE_SYNCHRONOUS as normal or full', () => {
    assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: 'FULL' }).sqliteSynchronous, 'full')
    assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: 'normal' }).sqliteSynchronous, 'normal')
    assert.throws(() => loadConfig({ SQLITE_SYNCHRONOUS: 'off' }), /SQLITE_SYNCHRONOUS/)
  })

  it('reads the connection limits and refuses unbounded or inconsistent ones', () => {
    const config = loadConfig({
      REQUEST_TIMEOUT_MS: '20000',
      HEADERS_TIMEOUT_MS: '5000',
      KEEP_ALIVE_TIMEOUT_MS: '1000',
      MAX_CONNECTIONS: '50',
    })
    assert.deepEqual(config.limits, {
      requestTimeoutMs: 20000,
      headersTimeoutMs: 5000,
      keepAliveTimeoutMs: 1000,
      maxConnections: 50,
      maxConnectionsPerAddress: 64,
      minBodyBytesPerSecond: 500,
      bodyRateGraceMs: 5000,
    })
    assert.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' }), /REQUEST_TIMEOUT_MS/)
    assert.throws(() => loadConfig({ MAX_CONNECTIONS: '-1' }), /MAX_CONNECTIONS/)
    assert.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: 'soon' }), /KEEP_ALIVE_TIMEOUT_MS/)
    assert.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '2000' }), /HEADERS_TIMEOUT_MS/)
  })
})
