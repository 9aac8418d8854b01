import type { BookChanges, NewBook, StoredBook } from '../books/book.ts'
import type { Change, TrashedBook } from '../books/change.ts'
import type { FindQuery, FoundBook, Position } from '../books/find.ts'
import type { AccountsSnapshot, StoredKey, StoredUser } from '../accounts/account.ts'
import type { Role } from '../auth/principal.ts'

export type UpdateResult = { outcome: 'updated'; book: StoredBook } | { outcome: 'missing' } | { outcome: 'stale' }
export type DeleteResult = 'deleted' | 'missing' | 'stale'

/**
 * The books: one repository per engine, plain methods that each run as one atomic step. Each
 * write takes the actor that asks for it, and records its change (docs/api.md#history) in the
 * same step, so that the change commits exactly when the write does.
 */
export interface BookRepository {
  create(actor: string, book: NewBook): Promise<StoredBook>
  /** Stores every book in one statement; their new ids, in the order of `books`. */
  createMany(actor: string, books: NewBook[]): Promise<number[]>
  /** How many books an import hands createMany at a time: what one statement of the engine stores best. */
  readonly importRows: number
  get(id: number): Promise<StoredBook | undefined>
  /**
   * For each of `books`, the smallest id of a stored book with the same title and author, folded
   * as search folds them (see books/folding.ts), and the same year; undefined where there is none.
   * Books in the trash are not stored books. Found through the index of the folded titles.
   * With `below`, only books whose id is below it: an import that stores as it looks passes its
   * first id, so that its own books are never taken for stored ones, nor read again and again.
   */
  sameAs(books: NewBook[], below?: number): Promise<(number | undefined)[]>
  /**
   * Applies `changes` when the book exists and, if `expectedRevisions` is given,
   * its revision is one of them; in one atomic step.
   */
  update(actor: string, id: number, changes: BookChanges, expectedRevisions?: readonly number[]): Promise<UpdateResult>
  /** Moves the book to the trash, when it exists and, if `expectedRevisions` is given, its revision is one of them. */
  delete(actor: string, id: number, expectedRevisions?: readonly number[]): Promise<DeleteResult>
  /** Moves the book back from the trash with its id and a new revision; undefined when it is not there. */
  restore(actor: string, id: number): Promise<StoredBook | undefined>
  /** Removes the book from the trash and its changes with it, leaving one `purged` change; false when it is not there. */
  purge(actor: string, id: number): Promise<boolean>
}

/** The changes recorded with the writes of books, read back. */
export interface ChangeRepository {
  /**
   * The changes of one book, newest first, with a seq below `before` when it is given; undefined
   * when no book with that id is stored or in the trash.
   */
  ofBook(bookId: number, before: number | undefined, limit: number): Promise<Change[] | undefined>
  get(seq: number): Promise<Change | undefined>
  /**
   * The changes with a seq greater than `after`, oldest first, at most `limit`. A change that
   * commits later always has a greater seq, so reading on from the last one returned never
   * misses a change nor sees one twice.
   */
  after(after: number, limit: number): Promise<Change[]>
  /** The seq of the newest change, 0 when none was ever made. */
  latest(): Promise<number>
}

/** The books in the trash. Times are milliseconds since the epoch. */
export interface TrashRepository {
  /** The latest deletions first, each deleted by a change with a seq below `before` when it is given. */
  list(before: number | undefined, limit: number): Promise<TrashedBook[]>
  /** Of the `limit` oldest deletions, the ids of the books deleted at or before `upTo`, the oldest first. */
  expired(upTo: number, limit: number): Promise<number[]>
}

/**
 * Failed logins, kept in the store so that every process and instance using it counts the same
 * ones. Times are milliseconds since the epoch.
 */
/**
 * The users and keys. Every change to one also moves the accounts' version, in the same
 * transaction, so that each instance notices it by reading one number.
 */
export interface AccountRepository {
  /** The accounts' version: it grows with every change to them. */
  current(): Promise<number>
  /** Everything, at a version at least as new as the one it names. */
  snapshot(): Promise<AccountsSnapshot>
  /** The new user, or undefined when the name is taken, whatever its case. Keys left under that name go. */
  createUser(user: Omit<StoredUser, 'stamp'>): Promise<StoredUser | undefined>
  /** Changes the role or the password hash, and the stamp; undefined when there is no such user. */
  updateUser(username: string, changes: { role?: Role | undefined; passwordHash?: string | undefined }): Promise<StoredUser | undefined>
  /** Deletes the user and every key of theirs; false when there is no such user. */
  deleteUser(username: string): Promise<boolean>
  createKey(key: Omit<StoredKey, 'id' | 'lastUsed'>): Promise<StoredKey>
  deleteKey(id: number): Promise<boolean>
  /** Records when keys were last used; moves no version, as nobody's access changes. */
  touchKeys(uses: ReadonlyMap<number, number>): Promise<void>
}

export interface LoginFailureRepository {
  /** Records a failure of `key` at `at`, and deletes every failure, of any key, at or before `expiredUpTo`. */
  record(key: string, at: number, expiredUpTo: number): Promise<void>
  /** The times of the newest `limit` failures of `key` after `since`, newest first. */
  recent(key: string, since: number, limit: number): Promise<number[]>
}

/** The answer a request with an `Idempotency-Key` gave, kept to answer its retries. */
export interface StoredAnswer {
  status: number
  /** The headers a replay repeats, by lower-case name. */
  headers: Record<string, string>
  /** The body as sent. */
  body: string
}

/** What claiming a key found: it is now the caller's, another request holds it, or it has an answer. */
export type KeyClaim = { state: 'claimed' } | { state: 'running' } | { state: 'done'; fingerprint: string; answer: StoredAnswer }

/**
 * Keys of retried writes, kept in the store so that a retry reaching any process or instance
 * finds the first request's answer. Times are milliseconds since the epoch.
 */
export interface IdempotencyKeyRepository {
  /**
   * Takes `key` of `scope` for a request that holds it until `lockedUntil`, unless another
   * request holds it or has answered it; a key whose holder's time ran out, or created at or
   * before `expiredUpTo`, is taken afresh. Deletes some keys created at or before `expiredUpTo`.
   */
  claim(scope: string, key: string, at: number, lockedUntil: number, expiredUpTo: number): Promise<KeyClaim>
  /** Records the answer of a claimed key; fails when the key is no longer held. Run it in the write's transaction. */
  complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer): Promise<void>
  /** Lets go of a claimed key that has no answer. */
  release(scope: string, key: string): Promise<void>
}

/** A page written as the JSON text of its books' array, which an engine may build faster than the caller. */
export interface JsonPage {
  json: string
  /** How many books it holds. */
  size: number
  /** Where the page after it starts; undefined when it is empty. */
  last: Position | undefined
}

export interface ReadOptions {
  /** Every page of the query, all from one snapshot of the catalogue; without it, the first page only. */
  whole?: boolean
  /** The address of the client asking: clients take turns, so that one cannot crowd out the others. */
  client?: string
  /**
   * Aborted once the client has gone before its answer began: the read's first page is not read,
   * or stops being read, and the read fails. Later pages end when the read is closed.
   */
  signal?: AbortSignal
}

/**
 * The pages of one read, in the query's order, the first already read. Stop iterating, or close
 * pages that are never iterated, to end the read: a whole read holds a snapshot until it ends.
 */
export interface BookPages<P> extends AsyncIterable<P> {
  /** With `count`: how many books match, all pages together. */
  readonly total: number | undefined
  /**
   * With `whole`: the seq of the newest change that the read's snapshot holds. The pages reflect
   * every change up to it and none after it (docs/api.md#following-changes).
   */
  readonly changeSeq: number | undefined
  /**
   * Whether the first page is also the last: iterating then gives it without another step, and
   * the caller may answer with it whole instead of streaming.
   */
  readonly complete: boolean
  close(): Promise<void>
}

/**
 * The one way books are read, however many: a page (`query.limit` books, after `query.after`), or
 * every book of the query, a page at a time. A read that cannot give a page within
 * SEARCH_DEADLINE_MS, waiting included, fails as unavailable, and its work stops with it; an
 * engine that ranks a whole read's matches after its first page in one step gives that step
 * RANKING_DEADLINE_MS.
 */
export interface BookReader {
  pages(query: FindQuery, options?: ReadOptions & { json?: false }): Promise<BookPages<FoundBook[]>>
  pages(query: FindQuery, options: ReadOptions & { json: true }): Promise<BookPages<JsonPage>>
}

/** Every repository of the store, each holding the queries of one kind of record. */
export interface Repositories {
  books: BookRepository
  changes: ChangeRepository
  trash: TrashRepository
  accounts: AccountRepository
  loginFailures: LoginFailureRepository
  idempotencyKeys: IdempotencyKeyRepository
}

/**
 * The names of the repositories, for code that treats each alike (instrumentation, transactions);
 * the type check fails when a repository is added to `Repositories` but not here.
 */
export const REPOSITORY_NAMES = Object.keys({
  books: true,
  changes: true,
  trash: true,
  accounts: true,
  loginFailures: true,
  idempotencyKeys: true,
} satisfies Record<keyof Repositories, true>) as (keyof Repositories)[]

/**
 * Where the service keeps its records: one implementation per engine, holding every repository.
 * Each applies its own migrations when opened and reports an unreachable engine as
 * StoreUnavailableError.
 */
export interface Store extends Repositories {
  /** Reads books, outside any transaction. */
  readonly reader: BookReader
  /**
   * Word that changes committed, from every process and instance sharing the store, where the
   * engine can give it; without it, readers of the changes ask the store from time to time.
   */
  readonly changeSignals?: ChangeSignals | undefined
  /**
   * Runs `work` with repositories bound to one transaction: everything it does commits when the
   * promise it returns resolves, and none of it when it rejects (the rejection is passed on).
   * The repositories must not be used after `work` settles; transactions do not nest.
   */
  transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T>
  /**
   * Whether an import is best stored while its file is still being read and checked, in a
   * transaction that opens once the whole file has arrived: true where the engine does its work
   * on a core of its own and a transaction held open holds back no other write (PostgreSQL).
   * SQLite stores on the thread that reads, and its transaction holds every other write: its
   * imports are read and checked in full first.
   */
  readonly storesWhileReading: boolean
  /** Resolves when the engine answers. */
  ping(): Promise<void>
  close(): Promise<void>
}

/** Word from the engine that changes were committed, by any process using the store. */
export interface ChangeSignals {
  /**
   * Calls `signal` soon after each commit that recorded changes, and once more after the word
   * could have been missed (a connection lost and opened again); `onError` hears of each failure
   * to listen, which is tried again by itself. Resolves with what stops listening.
   */
  listen(signal: () => void, onError: (err: unknown) => void): Promise<() => Promise<void>>
}

/**
 * Longest a request that needs the store may take before it is answered (docs/api.md: 503 within
 * 5 s): the readiness probe waits this long, and the default operation timeout stays below it.
 */
export const STORE_DEADLINE_MS = 5000

/**
 * Longest one page of books may take to read, waiting for its turn included: past it, the read
 * answers 503, and its statement is stopped.
 */
export const SEARCH_DEADLINE_MS = 2000

/**
 * Longest the step of a whole read by relevance that ranks every match after its first page may
 * take: the answer has begun, and ranking the commonest word of a million books takes PostgreSQL
 * seconds (docs/api.md#finding-books). Past it, the answer is cut off.
 */
export const RANKING_DEADLINE_MS = 10_000

/** Seconds a client should wait before trying again when the store is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 5

/**
 * The engine cannot be reached or did not answer in time; the request may succeed later. It
 * carries its answer, 503 with `Retry-After`, so that the HTTP layer needs no knowledge of it.
 */
export class StoreUnavailableError extends Error {
  readonly statusCode = 503
  readonly headers: Record<string, string> = { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) }

  constructor(cause: unknown) {
    super('The store is unavailable', { cause })
    this.name = 'StoreUnavailableError'
  }
}

/** A read ended, by its client's going (ReadOptions.signal) or its own failure, before this step of it was answered. */
export function readEnded(): StoreUnavailableError {
  return new StoreUnavailableError(new Error('The read of books was ended before it was answered'))
}
