/**
 * The summaries of blocks of short text (migration 023): a service that has just migrated a
 * catalogue summarises it for some seconds, and reads each of its blocks whole meanwhile, so that
 * a measure of finds waits until they are done.
 */
import { DatabaseSync } from 'node:sqlite'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

/** Blocks below the newest that wait for a summary, or 0 where there are none. */
const WAITING = `SELECT count(*) AS waiting FROM blocks_to_summarise WHERE block < (SELECT max(id) >> 10 FROM books)`

async function waitingBlocks(dbUrl: string): Promise<number> {
  if (dbUrl.startsWith('sqlite:')) {
    const db = new DatabaseSync(dbUrl.slice('sqlite:'.length), { readOnly: true })
    try {
      return Number(db.prepare(WAITING).get()!.waiting)
    } finally {
      db.close()
    }
  }
  const client = new pg.Client(dbUrl)
  await client.connect()
  try {
    return Number((await client.query<{ waiting: string }>(WAITING)).rows[0]!.waiting)
  } finally {
    await client.end()
  }
}

/** Resolves once a running service has summarised every block of the catalogue at `dbUrl`. */
export async function untilSummarised(dbUrl: string, log: (line: string) => void = console.log): Promise<void> {
  for (let waiting = await waitingBlocks(dbUrl); waiting > 0; waiting = await waitingBlocks(dbUrl)) {
    log(`  ${waiting} blocks wait for their summary`)
    await sleep(2000)
  }
}
