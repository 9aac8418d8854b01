import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { ImportSpool } from '../../src/formats/import-spool.ts'
import type { CheckedBatch } from '../../src/formats/book-import.ts'

// A temporary directory of this file's own: imports in other test files spool beside it in the shared one.
const ownTmp = await mkdtemp(join(tmpdir(), 'spool-test-'))
process.env.TMPDIR = ownTmp
after(() => rm(ownTmp, { recursive: true, force: true }))

const spoolDirectories = () => readdir(ownTmp)

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

test('remove leaves no file behind, whether or not the batches were read', async () => {
  const unread = await ImportSpool.create()
  await unread.write({ rows: [1], books: [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }] })
  const read = await ImportSpool.create()
  await read.write({ rows: [1], books: [{ title: 'Emma', author: 'Jane Austen', year: 1815 }] })
  await readAll(read)
  assert.equal((await spoolDirectories()).length, 2)
  await Promise.all([unread.remove(), read.remove()])
  assert.deepEqual(await spoolDirectories(), [])
})
