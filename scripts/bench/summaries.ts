/**
 * The summaries of blocks of short text (migration 023): a service that has just migrated a
 * catalogue summarises it for some seconds, and reads each of its blocks whole meanwhile, so that
 * a measure of finds waits until they are done. An SQLite service that has just imported books
 * also moves them into its search indexes for some seconds, and looks through those it has not
 * moved yet on every find.
 */
import { DatabaseSync } from 'node:sqlite'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { SEARCH_INDEX_BATCH } from '../../src/store/sqlite/search-index.ts'

/** Blocks below the newest that wait for a summary, or 0 where there are none. */
const WAITING = `SELECT count(*) AS waiting FROM blocks_to_summarise WHERE block < (SELECT max(id) >> 10 FROM books)`

/** Books of an SQLite catalogue not in its search indexes beyond the tail that a service leaves there. */
const UNINDEXED = `SELECT max(0, count(*) - ${SEARCH_INDEX_BATCH - 1}) AS waiting FROM books WHERE indexed IS NULL`

interface Waiting {
  blocks: number
  books: number
}

async function waiting(dbUrl: string): Promise<Waiting> {
  if (dbUrl.startsWith('sqlite:')) {
    const db = new DatabaseSync(dbUrl.slice('sqlite:'.length), { readOnly: true })
    try {
      return { blocks: Number(db.prepare(WAITING).get()!.waiting), books: Number(db.prepare(UNINDEXED).get()!.waiting) }
    } finally {
      db.close()
    }
  }
  const client = new pg.Client(dbUrl)
  await client.connect()
  try {
    return { blocks: Number((await client.query<{ waiting: string }>(WAITING)).rows[0]!.waiting), books: 0 }
  } finally {
    await client.end()
  }
}

/** Resolves once a running service has summarised every block of the catalogue at `dbUrl`, and indexed its books. */
export async function untilSummarised(dbUrl: string, log: (line: string) => void = console.log): Promise<void> {
  for (let left = await waiting(dbUrl); left.blocks + left.books > 0; left = await waiting(dbUrl)) {
    log(`  ${left.blocks} blocks wait for their summary, ${left.books} books for the search indexes`)
    await sleep(2000)
  }
}

/** Resolves once a running SQLite service has moved the books it imported into its search indexes; at once on PostgreSQL. */
export async function untilIndexed(dbUrl: string): Promise<void> {
  if (!dbUrl.startsWith('sqlite:')) return
  const db = new DatabaseSync(dbUrl.slice('sqlite:'.length), { readOnly: true })
  try {
    const unindexed = db.prepare(UNINDEXED)
    while (Number(unindexed.get()!.waiting) > 0) await sleep(250)
  } finally {
    db.close()
  }
}
