import type pg from 'pg'
import { searchKeys } from '../../books/folding.ts'

/** Books read and written back per statement while the search columns are filled. */
const BATCH = 1000

/**
 * Fills the search columns of every book stored before they existed. The folding is the
 * service's own code, which SQL cannot run, so it happens here, batch by batch, inside the
 * transaction of the migration that added the columns.
 */
export async function fillSearchKeys(client: pg.ClientBase): Promise<void> {
  let after = '0'
  for (;;) {
    // bigint ids arrive as text from this client, and go back as text: exact whatever their size.
    const { rows } = await client.query<{ id: string; title: string; author: string }>(
      'SELECT id, title, author FROM books WHERE id > $1::bigint ORDER BY id LIMIT $2',
      [after, BATCH],
    )
    if (rows.length === 0) return
    const keys = rows.map(searchKeys)
    await client.query(
      `UPDATE books SET title_folded = k.title_folded, author_folded = k.author_folded,
         title_words = k.title_words, author_words = k.author_words
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])
         AS k(id, title_folded, author_folded, title_words, author_words)
       WHERE books.id = k.id`,
      [
        rows.map((row) => row.id),
        keys.map((key) => key.titleFolded),
        keys.map((key) => key.authorFolded),
        keys.map((key) => key.titleWords),
        keys.map((key) => key.authorWords),
      ],
    )
    after = rows.at(-1)!.id
  }
}
