import assert from 'node:assert/strict'
import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { test } from 'node:test'
import { ImportSpool } from '../../src/formats/import-spool.ts'
import type { NewBook } from '../../src/schemas.ts'

const spoolDirectories = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('book-import-'))

async function readAll(spool: ImportSpool): Promise<NewBook[][]> {
  const batches: NewBook[][] = []
  for await (const batch of spool.batches()) batches.push(batch)
  return batches
}

test('batches come back as written, in order, text of every kind intact', async () => {
  const written = Array.from({ length: 300 }, (_, n) => [
    { title: `Book ${n}\nwith\r\u2028\u2029 line breaks`, author: 'Gabriel García Márquez', year: n },
    { title: '"Quoted", \\ and 😀', author: 'J.K. Rowling, Mary GrandPré', year: -1 - n },
  ])
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
  const before = await spoolDirectories()
  const unread = await ImportSpool.create()
  await unread.write([{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
  const read = await ImportSpool.create()
  await read.write([{ title: 'Emma', author: 'Jane Austen', year: 1815 }])
  await readAll(read)
  assert.equal((await spoolDirectories()).length, before.length + 2)
  await Promise.all([unread.remove(), read.remove()])
  assert.deepEqual(await spoolDirectories(), before)
})
