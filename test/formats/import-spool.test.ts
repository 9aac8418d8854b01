import assert from 'node:assert/strict'
import { mkdtemp, open, readdir, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { BodySpool, ImportSpool, SpoolUnavailableError } from '../../src/formats/import-spool.ts'
import { ImportTooLargeError } from '../../src/formats/import-errors.ts'
import type { CheckedBatch } from '../../src/formats/book-import.ts'

// A temporary directory of this file's own: imports in other test files spool beside it in the
// shared one. Given back when the file ends, as the files after it may run in this process.
const ownTmp = await mkdtemp(join(tmpdir(), 'spool-test-'))
const sharedTmp = process.env.TMPDIR
process.env.TMPDIR = ownTmp
after(async () => {
  if (sharedTmp === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = sharedTmp
  await rm(ownTmp, { recursive: true, force: true })
})

/** The files of this process's open descriptors that lie in the temporary directory, or are `also`. */
async function openSpoolFiles(also?: string): Promise<string[]> {
  const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')))
  return targets.filter((target) => target.startsWith(ownTmp) || target === also)
}

async function readAll(spool: ImportSpool): Promise<CheckedBatch[]> {
  const batches: CheckedBatch[] = []
  for await (const batch of spool.batches()) batches.push(batch)
  return batches
}

test('batches come back as written, in order, with their rows, text of every kind intact', async () => {
  const written: CheckedBatch[] = Array.from({ length: 300 }, (_, n) => ({
    rows: [3 * n + 1, 3 * n + 3],
    books: [
      { title: `Book ${n}\nwith\r\u2028\u2029 line breaks`, author: 'Gabriel García Márquez', year: n },
      { title: '"Quoted", \\ and 😀', author: 'J.K. Rowling, Mary GrandPré', year: -1 - n },
    ],
  }))
  // Longer than one read of the file.
  written.splice(150, 0, {
    rows: Array.from({ length: 500 }, (_, n) => 1000 + n),
    books: Array.from({ length: 500 }, (_, n) => ({ title: `Long batch ${n}`.padEnd(200, '.'), author: 'Many', year: n })),
  })
  const spool = await ImportSpool.create()
  try {
    for (const batch of written) await spool.write(batch)
    assert.deepEqual(await readAll(spool), written)
  } finally {
    await spool.remove()
  }
})

test('a spool with nothing written reads as no batches', async () => {
  const spool = await ImportSpool.create()
  try {
    assert.deepEqual(await readAll(spool), [])
  } finally {
    await spool.remove()
  }
})

test('the file is never visible in the folder, and its descriptor is closed by remove, whether or not the batches were read', async () => {
  const unread = await ImportSpool.create()
  await unread.write({ rows: [1], books: [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }] })
  const read = await ImportSpool.create()
  await read.write({ rows: [1], books: [{ title: 'Emma', author: 'Jane Austen', year: 1815 }] })
  await readAll(read)
  // Unlinked at once: a process that dies mid-import leaves nothing in the folder.
  assert.deepEqual(await readdir(ownTmp), [])
  assert.equal((await openSpoolFiles()).length, 2)
  await Promise.all([unread.remove(), read.remove()])
  assert.deepEqual(await openSpoolFiles(), [])
})

test('a full disk fails the import as unavailable for now (503), not as an internal error', async () => {
  // Every write to /dev/full fails as a full disk does.
  const spool = await ImportSpool.create(ownTmp, () => open('/dev/full', 'w'))
  try {
    const book = { title: 'x'.repeat(500), author: 'y', year: 1 }
    const failure = await (async () => {
      try {
        for (let i = 0; i < 1000; i++)
          await spool.write({ rows: Array.from({ length: 100 }, (_, n) => n + 1), books: Array(100).fill(book) })
        for await (const _ of spool.batches());
      } catch (err) {
        return err
      }
    })()
    assert.ok(failure instanceof SpoolUnavailableError, String(failure))
    assert.equal(failure.statusCode, 503)
    assert.equal(failure.headers['retry-after'], '5')
  } finally {
    await spool.remove()
  }
})

test('a body comes back byte for byte as it arrived, in chunks, however it was cut', async () => {
  const body = Buffer.from(Array.from({ length: 200_000 }, (_, n) => `${n},Cien años de soledad 😀\r\n`).join(''))
  const arriving = async function* () {
    for (let start = 0; start < body.length; start += 10_007) yield body.subarray(start, start + 10_007)
  }
  const spool = await BodySpool.receive(arriving(), body.length)
  try {
    const chunks = [...spool.bytes()].map((chunk) => Buffer.from(chunk))
    assert.ok(chunks.length > 1)
    assert.ok(Buffer.concat(chunks).equals(body))
    // Read from the start each time.
    assert.ok(Buffer.concat([...spool.bytes()].map((chunk) => Buffer.from(chunk))).equals(body))
  } finally {
    await spool.remove()
  }
  assert.deepEqual(await openSpoolFiles(), [])
})

test('a body over the limit, or one that stops arriving, fails and leaves no file or descriptor behind', async () => {
  const tooLarge = async function* () {
    yield Buffer.alloc(600)
    yield Buffer.alloc(600)
  }
  await assert.rejects(BodySpool.receive(tooLarge(), 1000), ImportTooLargeError)
  const cut = async function* () {
    yield Buffer.alloc(600)
    throw new Error('aborted')
  }
  await assert.rejects(BodySpool.receive(cut(), 1000), /aborted/)
  assert.deepEqual(await readdir(ownTmp), [])
  assert.deepEqual(await openSpoolFiles(), [])
})

test('a body that cannot be written to a full disk is unavailable for now (503), and its descriptor is closed', async () => {
  const body = async function* () {
    for (let i = 0; i < 100; i++) yield Buffer.alloc(64 * 1024)
  }
  await assert.rejects(
    BodySpool.receive(body(), 32 * 1024 * 1024, ownTmp, () => open('/dev/full', 'w')),
    SpoolUnavailableError,
  )
  assert.deepEqual(await openSpoolFiles('/dev/full'), [])
})
