import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { csvOf, serviceFor, storeEngines, TEST_PASSWORD, TEST_USERNAME, type TestService } from './support/service.ts'
import { cliFor, NODE, type Cli, type Run } from './support/cli.ts'

const execute = promisify(execFile)
const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }

/** Asserts the command failed with `code` and said why in exactly one line, with no stack trace. */
function assertFailed(run: Run, code: number, message: RegExp | string): void {
  assert.equal(run.code, code, run.stderr)
  assert.equal(run.stdout, '')
  const lines = run.stderr.trimEnd().split('\n')
  assert.equal(lines.length, 1, run.stderr)
  if (typeof message === 'string') assert.equal(lines[0], `book-catalogue: ${message}`)
  else assert.match(lines[0]!, message)
}

/** Output with its times, which change from run to run, written as their form. */
function timeless(text: string): string {
  return text.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, 'yyyy-mm-dd hh:mm:ss')
}

function assertDone(run: Run): void {
  assert.equal(run.code, 0, run.stderr)
}

/** The command, signed in as the configured admin. */
async function signedIn(t: Parameters<typeof cliFor>[0], service: TestService): Promise<Cli> {
  const cli = await cliFor(t, service.url)
  assertDone(await cli.run(['login', '--username', TEST_USERNAME], { env: { BOOKS_PASSWORD: TEST_PASSWORD } }))
  return cli
}

for (const engine of storeEngines) {
  describe(`the book-catalogue command (${engine.name})`, { skip: engine.skip }, () => {
    it('login keeps the token in the config folder, readable by the user alone; the commands after it use it', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await cliFor(t, service.url)
      const login = await cli.run(['login', '--username', TEST_USERNAME], { env: { BOOKS_PASSWORD: TEST_PASSWORD } })
      assertDone(login)
      assert.match(login.stderr, new RegExp(`^Signed in to ${service.url} as ${TEST_USERNAME} \\(admin\\)`))
      const folder = join(cli.home, 'book-catalogue')
      assert.equal((await stat(folder)).mode & 0o777, 0o700)
      assert.equal((await stat(join(folder, 'session.json'))).mode & 0o777, 0o600)
      const saved = JSON.parse(await readFile(join(folder, 'session.json'), 'utf8'))
      assert.equal(saved.url, service.url)
      assert.equal(saved.sessions[service.url].username, TEST_USERNAME)
      const added = await cli.run(['add', '--title', dune.title, '--author', dune.author, '--year', String(dune.year), '--json'])
      assertDone(added)
      assert.deepEqual(JSON.parse(added.stdout), { id: 1, ...dune })
      // Without BOOKS_URL, the service of the latest login.
      const found = await cli.run(['find', '--json'], { env: { BOOKS_URL: '' } })
      assert.deepEqual(JSON.parse(found.stdout), [{ id: 1, ...dune }])
      assertDone(await cli.run(['logout']))
      assertFailed(
        await cli.run(['find']),
        1,
        `not signed in to ${service.url}: run book-catalogue login --username NAME, or set BOOKS_KEY`,
      )
    })

    it('login reads the password from stdin when it is not a terminal; a wrong one is one line and exit code 1', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await cliFor(t, service.url)
      assertDone(await cli.run(['login', '--username', TEST_USERNAME], { input: `${TEST_PASSWORD}\n` }))
      assertFailed(await cli.run(['login', '--username', TEST_USERNAME], { input: 'not the password\n' }), 1, 'Invalid credentials (401)')
    })

    it('find takes every filter of the service, and prints a table, JSON or CSV', async (t) => {
      const service = await serviceFor(t, engine)
      const catalogue = await service.admin()
      for (const book of [
        { title: 'The Shining', author: 'Stephen King', year: 1977 },
        { title: 'It', author: 'Stephen King', year: 1986 },
        { title: 'Misery', author: 'Stephen King', year: 1987 },
        { title: 'The Poisonwood Bible', author: 'Barbara Kingsolver', year: 1998 },
        { title: '=cmd, "quoted"', author: 'Someone', year: 2001 },
      ])
        await catalogue.books.create(book)
      const cli = await signedIn(t, service)
      const json = await cli.run(['find', '--author', 'king', '--year-from', '1980', '--year-to', '1998', '--sort', '-year', '--json'])
      assertDone(json)
      assert.deepEqual(
        JSON.parse(json.stdout).map((book: { title: string }) => book.title),
        ['The Poisonwood Bible', 'Misery', 'It'],
      )
      const table = await cli.run(['find', 'shin'])
      assert.equal(table.stdout, 'ID  TITLE        AUTHOR        YEAR\n 1  The Shining  Stephen King  1977\n')
      const limited = await cli.run(['find', '--title', 'i', '--sort', 'title', '--limit', '2', '--count', '--csv'])
      assert.equal(limited.stdout, 'id,title,author,year\r\n2,It,Stephen King,1986\r\n3,Misery,Stephen King,1987\r\n')
      assert.equal(limited.stderr, '2 books of 4 matches\n')
      const quoted = await cli.run(['find', '--year', '2001', '--csv'])
      assert.equal(quoted.stdout, 'id,title,author,year\r\n5,"\'=cmd, ""quoted""",Someone,2001\r\n')
      const none = await cli.run(['find', 'nothing-like-this'])
      assert.deepEqual([none.code, none.stdout, none.stderr], [0, '', 'No books\n'])
    })

    it('add, edit, rm, trash, restore, history, revert and purge, each printing what it did', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await signedIn(t, service)
      assertDone(await cli.run(['add', '--title', 'Dune', '--author', 'Frank Herbert', '--year', '1965']))
      const edited = await cli.run(['edit', '1', '--year', '1966', '--json'])
      assert.deepEqual(JSON.parse(edited.stdout), { ...dune, id: 1, year: 1966 })
      const removed = await cli.run(['rm', '1'])
      assert.deepEqual([removed.code, removed.stderr], [0, 'Deleted book 1: book-catalogue restore 1 takes it back\n'])
      const trash = await cli.run(['trash', '--json'])
      assert.deepEqual(
        JSON.parse(trash.stdout).map((book: { id: number; deleted_by: string }) => [book.id, book.deleted_by]),
        [[1, TEST_USERNAME]],
      )
      assert.deepEqual(JSON.parse((await cli.run(['restore', '1', '--json'])).stdout), [{ ...dune, id: 1, year: 1966 }])
      const history = JSON.parse((await cli.run(['history', '1', '--json'])).stdout) as { seq: number; kind: string }[]
      assert.deepEqual(
        history.map((change) => change.kind),
        ['restored', 'deleted', 'updated', 'created'],
      )
      const table = await cli.run(['history', '1', '--limit', '1'])
      assert.equal(
        timeless(table.stdout),
        'SEQ  AT                   KIND      ACTOR      TITLE  AUTHOR         YEAR\n' +
          `${String(history[0]!.seq).padStart(3)}  yyyy-mm-dd hh:mm:ss  restored  librarian  Dune   Frank Herbert  1966\n`,
      )
      const reverted = await cli.run(['revert', '1', String(history.at(-1)!.seq), '--json'])
      assert.deepEqual(JSON.parse(reverted.stdout), { ...dune, id: 1 })
      assertDone(await cli.run(['rm', '1']))
      const purged = await cli.run(['purge', '1'])
      assert.deepEqual([purged.code, purged.stderr], [0, 'Purged book 1 and its history for good\n'])
      assertFailed(await cli.run(['show', '1']), 1, 'Book not found (404)')
    })

    it('import checks the file first, then imports it with its progress, line by line when stderr is not a terminal', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await signedIn(t, service)
      const file = join(cli.home, 'books.csv')
      await writeFile(file, csvOf(20_000))
      const imported = await cli.run(['import', file])
      assertDone(imported)
      const lines = imported.stderr.trimEnd().split('\n')
      assert.ok(
        lines.some((line) => /^Checking books\.csv \[#+-*\] +\d+%/.test(line)),
        imported.stderr,
      )
      assert.ok(lines.includes('books.csv: 20,000 books to import, 0 invalid rows, 0 duplicates'), imported.stderr)
      assert.ok(
        lines.some((line) => /^Importing books\.csv: \d+ KiB sent in [\d.]+ s; the service is storing it…/.test(line)),
        imported.stderr,
      )
      assert.equal(lines.at(-1), `Imported 20,000 books into ${service.url}: ids 1–20000`)
      assert.equal(await (await service.admin()).books.count(), 20_000)
    })

    it('an import with invalid rows stores nothing and lists them, unless told to skip them; --no-check sends the file once', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await signedIn(t, service)
      const file = join(cli.home, 'books.ndjson')
      await writeFile(file, '{"title":"Dune","author":"Frank Herbert","year":1965}\n{"title":"","author":"Nobody","year":1}\n')
      const refused = await cli.run(['import', file])
      assert.equal(refused.code, 1)
      assert.equal(
        refused.stderr.replace(/^(Checking|Importing) .*\n/gm, ''),
        'books.ndjson: 1 book to import, 1 invalid row, 0 duplicates\n' +
          '  row 2: title must be text of 1 to 500 characters, not blank, with no NUL character\n' +
          'book-catalogue: nothing imported: fix the rows above, or pass --skip-invalid to import the others\n',
      )
      const unchecked = await cli.run(['import', '--no-check', file])
      assert.equal(unchecked.code, 1)
      assert.equal(
        unchecked.stderr.replace(/^Importing .*\n/gm, ''),
        'book-catalogue: Invalid input (400)\n  row 2: title must be text of 1 to 500 characters, not blank, with no NUL character\n',
      )
      assert.equal(await (await service.admin()).books.count(), 0)
      const skipped = await cli.run(['import', '--skip-invalid', '--json', file])
      assertDone(skipped)
      assert.deepEqual(JSON.parse(skipped.stdout), {
        imported: 1,
        ids: [1],
        errors: [{ row: 2, message: 'title must be text of 1 to 500 characters, not blank, with no NUL character' }],
      })
    })

    it('--skip-duplicates leaves out the books a file repeats, which the check counts first', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await signedIn(t, service)
      const file = join(cli.home, 'books.csv')
      await writeFile(file, 'title,author,year\nDune,Frank Herbert,1965\nEmma,Jane Austen,1815\ndune,FRANK HERBERT,1965\n')
      const first = await cli.run(['import', '--skip-duplicates', file])
      assertDone(first)
      const lines = first.stderr.split('\n').filter((line) => !/^(Checking|Importing) /.test(line))
      assert.deepEqual(lines, [
        'books.csv: 3 books to import, 0 invalid rows, 1 duplicate',
        '  the 1 duplicate will be left out',
        `Imported 2 books into ${service.url}: ids 1–2`,
        'Left out 1 duplicate',
        '',
      ])
      const again = await cli.run(['import', '--skip-duplicates', '--no-check', '--json', file])
      assertDone(again)
      assert.deepEqual(JSON.parse(again.stdout), {
        imported: 0,
        ids: [],
        duplicates: [
          { row: 1, id: 1 },
          { row: 2, id: 2 },
          { row: 3, id: 1 },
        ],
      })
      assert.equal(await (await service.admin()).books.count(), 2)
    })

    it('export writes every book a query finds to a file or stdout, as the service writes it', async (t) => {
      const service = await serviceFor(t, engine)
      const catalogue = await service.admin()
      await catalogue.books.import(new Blob([csvOf(50)]))
      const cli = await signedIn(t, service)
      const file = join(cli.home, 'export.csv')
      const written = await cli.run(['export', '--author', 'author 1', '--sort', '-id', '-o', file])
      const expected = await new Response(await catalogue.books.export({ author: 'author 1', sort: '-id' })).arrayBuffer()
      assert.deepEqual(await readFile(file), Buffer.from(expected))
      assert.equal(written.stderr, `Exported to ${file} (${expected.byteLength} bytes)\n`)
      const ndjson = await cli.run(['export', 'book', '--format', 'ndjson', '--year', '1905'])
      assert.deepEqual(
        ndjson.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).id),
        [5],
      )
    })

    it('users and keys: an admin adds a user with a password from stdin, and a key that the command then uses', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await signedIn(t, service)
      const added = await cli.run(['users', 'add', 'ada', '--role', 'editor', '--json'], { input: 'a quiet harbour at dawn\n' })
      assert.deepEqual({ ...JSON.parse(added.stdout), created: null }, { username: 'ada', role: 'editor', created: null })
      const users = await cli.run(['users'])
      assert.equal(timeless(users.stdout), 'USERNAME   ROLE    CREATED\nlibrarian  admin\nada        editor  yyyy-mm-dd hh:mm:ss\n')
      // CSV keeps each time as the service gives it, for programs to read; only the table shortens it.
      const listed = JSON.parse((await cli.run(['users', '--json'])).stdout) as { created: string | null }[]
      assert.match(listed[1]!.created!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
      assert.equal(
        (await cli.run(['users', '--csv'])).stdout,
        `username,role,created\r\nlibrarian,admin,\r\nada,editor,${listed[1]!.created}\r\n`,
      )
      assertDone(await cli.run(['users', 'set', 'ada', '--role', 'reader']))
      const key = await cli.run(['keys', 'add', 'nightly import', '--role', 'reader'])
      assertDone(key)
      assert.match(key.stdout, /^bk_\S+\n$/)
      assert.match(key.stderr, /^Key 1 "nightly import" \(reader\) never expires\./)
      const program = await cliFor(t, service.url)
      const found = await program.run(['find', '--json'], { env: { BOOKS_KEY: key.stdout.trim() } })
      assert.deepEqual([found.code, found.stdout], [0, '[]\n'])
      assertFailed(
        await program.run(['add', '--title', 'T', '--author', 'A', '--year', '1'], { env: { BOOKS_KEY: key.stdout.trim() } }),
        1,
        'Forbidden (403)',
      )
      const keys = timeless((await cli.run(['keys', 'list'])).stdout)
        .trimEnd()
        .split('\n')
        .map((line) => line.trim().split(/ {2,}/))
      // The last use is the key's find above, or not yet written: it is accurate to a minute.
      assert.deepEqual(
        keys.map((row) => row.slice(0, 6)),
        [
          ['ID', 'NAME', 'ROLE', 'OWNER', 'CREATED', 'EXPIRES'],
          ['1', 'nightly import', 'reader', 'librarian', 'yyyy-mm-dd hh:mm:ss', 'never'],
        ],
      )
      const keysCsv = (await cli.run(['keys', 'list', '--csv'])).stdout.split('\r\n')
      assert.equal(keysCsv[0], 'id,name,role,owner,created,expires,last_used')
      assert.match(keysCsv[1]!, /^1,nightly import,reader,librarian,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z,,/)
      assertDone(await cli.run(['keys', 'rm', '1']))
      assertDone(await cli.run(['users', 'rm', 'ada']))
      assertFailed(await cli.run(['users', 'show', 'ada']), 1, 'User not found (404)')
    })

    it('watch prints each change as it commits, one line each, until Ctrl-C', async (t) => {
      const service = await serviceFor(t, engine)
      const catalogue = await service.admin()
      const { book } = await catalogue.books.create(dune)
      const cli = await signedIn(t, service)
      const lines = cli.start(['watch', '--since', '0'])
      await lines.line('stdout', (line) => line.includes(' created '))
      await catalogue.books.update(book.id, { year: 1966 })
      await catalogue.books.delete(book.id)
      await lines.line('stdout', (line) => line.includes(' deleted '))
      const json = cli.start(['watch', '--since', '1', '--json'])
      await json.line('stdout', (line) => line.includes('"deleted"'))
      lines.kill('SIGINT')
      json.kill('SIGINT')
      const [plain, parsed] = await Promise.all([lines.done, json.done])
      assert.deepEqual([plain.code, parsed.code], [0, 0])
      assert.equal(
        timeless(plain.stdout),
        [
          `1  yyyy-mm-dd hh:mm:ss  created  librarian  book ${book.id}: Dune, Frank Herbert, 1965`,
          `2  yyyy-mm-dd hh:mm:ss  updated  librarian  book ${book.id}: Dune, Frank Herbert, 1966`,
          `3  yyyy-mm-dd hh:mm:ss  deleted  librarian  book ${book.id}: Dune, Frank Herbert, 1966`,
          '',
        ].join('\n'),
      )
      assert.equal(plain.stderr, `Following the changes of ${service.url} after 0; Ctrl-C stops\n`)
      assert.deepEqual(
        parsed.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).kind),
        ['updated', 'deleted'],
      )
    })

    it('wrong usage is exit code 2, with what was wrong', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await signedIn(t, service)
      for (const args of [
        ['find', '--year', '1e3'],
        ['show', 'abc'],
        ['frobnicate'],
        ['edit', '1'],
        ['find', '--json', '--csv'],
        ['login'],
      ]) {
        const run = await cli.run(args)
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
        assert.equal(run.stdout, '')
        assert.doesNotMatch(run.stderr, /\n\s+at /)
      }
      const help = await cli.run(['import', '--help'])
      assert.equal(help.code, 0)
      assert.match(help.stdout, /^Usage: book-catalogue import \[options\] <file>/)
    })

    it('a file that does not exist is refused in one line', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await signedIn(t, service)
      assertFailed(await cli.run(['import', '/no/such/books.csv']), 1, 'cannot read /no/such/books.csv: no such file')
    })
  })
}

describe('the book-catalogue bin', () => {
  it('runs the command, built or from its sources', async () => {
    const bin = fileURLToPath(new URL('../bin/book-catalogue.js', import.meta.url))
    const help = await execute(NODE, [bin, '--help'])
    assert.match(help.stdout, /^Usage: book-catalogue \[options\] \[command\]/)
    assert.match(help.stdout, /Exit codes: 0 done; 1 refused/)
  })
})
