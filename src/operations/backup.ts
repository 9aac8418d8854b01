import { closeSync, existsSync, fsyncSync, linkSync, openSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { backup, DatabaseSync } from 'node:sqlite'
import { mebibytes, reportProgress } from './progress.ts'
import { OperationError, reason } from './operation-error.ts'

/**
 * Every page in one step. SQLite starts a backup over whenever another connection writes the
 * store between two steps, so under steady writes a backup of many steps may never end; a single
 * step reads one snapshot, while the service's writes go on in the write-ahead log. node:sqlite
 * runs the step off the main thread, so progress is read from the growing copy meanwhile.
 */
const ALL_PAGES = 2 ** 31 - 1

/** Suffixes of the partial copy's files: the copy itself, and what SQLite keeps beside it while writing it. */
const PARTIAL_FILES = ['', '-journal', '-wal', '-shm']

/**
 * Copies the SQLite store at `storePath` to the new file `target`, consistent as of one moment,
 * while the service goes on reading and writing it: every write answered before the copy began
 * is in it. The copy is one file, readable by this user only, without a write-ahead log beside
 * it. It is written under a hidden name in the target's folder and takes its name only once
 * complete, so `target` never holds half a copy, and an existing file is never replaced.
 */
export async function backupStore(storePath: string, target: string, say: (line: string) => void): Promise<string> {
  if (!existsSync(storePath)) throw new OperationError(`there is no store at ${storePath}: nothing was copied`)
  if (existsSync(target)) throw new OperationError(`${target} exists: give a path that does not, nothing was overwritten`)
  const folder = dirname(target)
  const partial = join(folder, `.${basename(target)}.${process.pid}.partial`)
  try {
    closeSync(openSync(partial, 'wx', 0o600))
  } catch (err) {
    throw new OperationError(`cannot write in ${folder}: ${reason(err)}; nothing was copied`)
  }

  const started = performance.now()
  let source: DatabaseSync | undefined
  try {
    source = new DatabaseSync(storePath, { readOnly: true })
    source.exec('PRAGMA busy_timeout = 5000')
    const { pages, pageSize } = source
      .prepare('SELECT page_count AS pages, page_size AS pageSize FROM pragma_page_count, pragma_page_size')
      .get() as {
      pages: number
      pageSize: number
    }
    const stopReporting = reportProgress('backup', () => sizeOf(partial), pages * pageSize, say)
    try {
      await backup(source, partial, { rate: ALL_PAGES })
    } finally {
      stopReporting()
    }
    // The copy carries the store's journal mode, WAL; as a single file it can be read anywhere.
    const copy = new DatabaseSync(partial)
    copy.exec('PRAGMA journal_mode = DELETE')
    copy.close()
    linkSync(partial, target)
    syncFolder(folder)
  } catch (err) {
    if (err instanceof OperationError) throw err
    const code = (err as NodeJS.ErrnoException).code
    throw new OperationError(
      code === 'EEXIST' ? `${target} appeared during the backup: it was kept, and the copy dropped` : `the backup failed: ${reason(err)}`,
    )
  } finally {
    source?.close()
    for (const suffix of PARTIAL_FILES) rmSync(partial + suffix, { force: true })
  }
  const seconds = (performance.now() - started) / 1000
  return `backed up ${storePath} to ${target}: ${mebibytes(statSync(target).size)} MiB in ${seconds.toFixed(1)} s`
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** Makes the copy's new name survive a power loss, as SQLite makes its content survive one. */
function syncFolder(folder: string): void {
  const handle = openSync(folder, 'r')
  try {
    fsyncSync(handle)
  } finally {
    closeSync(handle)
  }
}
