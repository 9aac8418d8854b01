import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { dune, storeEngines } from '../../helpers.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

describe('postgres store: the order of changes', { skip: postgres.skip }, () => {
  it('gives a change committed later a greater seq, whichever transaction wrote first', async () => {
    const store = await postgres.open()
    try {
      const committed: string[] = []
      let letGo!: () => void
      const held = new Promise<void>((resolve) => (letGo = resolve))
      let written!: () => void
      const wroteFirst = new Promise<void>((resolve) => (written = resolve))
      // The first transaction writes, then stays open while a second write is made and asks to commit.
      const first = store.transaction(async (repositories) => {
        const book = await repositories.books.create('ada', dune)
        written()
        await held
        return book
      })
      await wroteFirst
      const second = store.books.create('grace', { ...dune, title: 'Children of Dune' }).then((book) => {
        committed.push('second')
        return book
      })
      await sleep(200)
      letGo()
      const firstBook = await first
      committed.push('first')
      const secondBook = await second
      const seqOf = async (id: number) => (await store.changes.ofBook(id, undefined, 1))![0]!.seq
      const [firstSeq, secondSeq] = [await seqOf(firstBook.id), await seqOf(secondBook.id)]
      // A reader that has seen a seq has seen every change with a smaller one: none commits after it.
      assert.deepEqual(committed, ['first', 'second'])
      assert.ok(firstSeq < secondSeq, `${firstSeq} < ${secondSeq}`)
    } finally {
      await store.close()
    }
  })
})
