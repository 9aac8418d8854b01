import type pg from 'pg'
import { BLOCK_BITS, blockIds, summaryOf, unseenDeletion } from '../sql/block-grams.ts'

/** The lock of a block, which its writers hold shared until they commit (migration 023). */
const BLOCK_LOCK = `hashtextextended('book-catalogue blocks ' || current_schema(), $1)`

/** Waiting blocks looked at per step: one held by a transaction still open is left for later. */
const CANDIDATES = 8

/**
 * Puts the blocks of the books deleted since the last look back on the list, from the trash by the
 * seq of their deletion, in one statement that writes nothing when none came meanwhile. Changes
 * commit in the order of their seq, so the newest deletion this statement sees has none below it
 * still to come. Instances may look at once: the newest seen only goes forward.
 */
export async function noteDeletions(client: pg.ClientBase): Promise<void> {
  await client.query(NOTE_DELETIONS)
}

const NOTE_DELETIONS = `
  WITH newest AS (SELECT max(deleted_seq) AS seq FROM trashed_books),
  marked AS (
    INSERT INTO blocks_to_summarise
    SELECT DISTINCT id >> ${BLOCK_BITS} FROM trashed_books WHERE ${unseenDeletion('deleted_seq')}
    ON CONFLICT DO NOTHING
  )
  UPDATE block_deletions_seen SET seq = newest.seq FROM newest WHERE id = 1 AND newest.seq > block_deletions_seen.seq`

/**
 * Summarises one block of books at a time (migrations 023 and 028): the oldest waiting block below
 * the newest, which new books are still filling, whose lock no writer holds. Instances may summarise
 * at once: each takes the block it summarises under its lock, and summarising twice does no harm.
 */
export async function summariseBlock(client: pg.ClientBase): Promise<boolean> {
  // Asked outside a transaction: a look that finds no block, the usual one, opens none.
  const { rows } = await client.query<{ block: number | string }>(
    `SELECT block FROM blocks_to_summarise WHERE block < (SELECT max(id) >> ${BLOCK_BITS} FROM books) ORDER BY block LIMIT ${CANDIDATES}`,
  )
  if (rows.length === 0) return false
  await client.query('BEGIN')
  try {
    // bigint arrives as text where the connection has no parser for it.
    for (const block of rows.map((row) => Number(row.block))) {
      const { rows: locked } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock(${BLOCK_LOCK}) AS locked`, [block])
      if (!locked[0]!.locked) continue
      // After the lock: this statement sees every book its writers stored or changed.
      const books = await client.query<[string, string]>({
        text: 'SELECT title_folded, author_folded FROM books WHERE id >= $1 AND id < $2',
        values: blockIds(block),
        rowMode: 'array',
      } as pg.QueryConfig)
      const { fields, grams } = summaryOf(books.rows)
      // Under the lock, no transaction still open has stored or changed a book of the block: the
      // text that its books no longer hold can go.
      await client.query(
        `DELETE FROM block_grams WHERE block = $3 AND (field, gram) NOT IN (SELECT * FROM unnest($1::smallint[], $2::text[]))`,
        [fields, grams, block],
      )
      await client.query(
        `INSERT INTO block_grams (field, gram, block) SELECT field, gram, $3 FROM unnest($1::smallint[], $2::text[]) AS summary(field, gram)
         ON CONFLICT DO NOTHING`,
        [fields, grams, block],
      )
      await client.query('DELETE FROM blocks_to_summarise WHERE block = $1', [block])
      await client.query('COMMIT')
      return true
    }
    await client.query('COMMIT')
    return false
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  }
}
