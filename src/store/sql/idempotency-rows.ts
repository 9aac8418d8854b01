import type { KeyClaim } from '../store.ts'

/** A row of `idempotency_keys` as either engine reads it. */
export interface KeyRow {
  fingerprint: string | null
  status: number | null
  headers: string | null
  body: string | null
}

/** What a key's row, read after a claim failed, says: still running, or answered. */
export function keyClaimOf(row: KeyRow | undefined): KeyClaim {
  // Gone between the claim and the read: purged or released; the client's retry claims it.
  if (row === undefined || row.status === null) return { state: 'running' }
  return {
    state: 'done',
    fingerprint: row.fingerprint ?? '',
    answer: { status: row.status, headers: JSON.parse(row.headers ?? '{}') as Record<string, string>, body: row.body ?? '' },
  }
}
