import { existsSync, realpathSync } from 'node:fs'
import { backup, DatabaseSync } from 'node:sqlite'
import { createPrivateDatabaseFile } from '../store/sqlite/private-files.ts'
import { checkBackup } from './backup-check.ts'
import { mebibytes, reportProgress } from './progress.ts'
import { OperationError, reason } from './operation-error.ts'
import { refuseWhileOpen } from './store-lock.ts'

/** 16 MiB of 4 KiB pages a step: nothing writes the backup, so its steps never start over. */
const PAGES_PER_STEP = 4096

/**
 * Puts the backup at `backupPath` in place of the SQLite store at `storePath`, whole: its books
 * and every other table. Refused, with the store untouched, when the file is not a backup of this
 * service or is of a newer schema, or while a service has the store open. SQLite writes the
 * backup into the store in one transaction, so a restore that fails leaves the store as it was.
 */
export async function restoreStore(backupPath: string, storePath: string, say: (line: string) => void): Promise<string> {
  if (existsSync(storePath) && existsSync(backupPath) && realpathSync(storePath) === realpathSync(backupPath)) {
    throw new OperationError(`${backupPath} is the store itself: nothing was restored`)
  }
  const { pages, pageSize } = checkBackup(backupPath, say)
  refuseWhileOpen(storePath)

  const started = performance.now()
  const source = new DatabaseSync(backupPath, { readOnly: true })
  let remaining = pages
  const stopReporting = reportProgress('restore', () => (pages - remaining) * pageSize, pages * pageSize, say)
  try {
    createPrivateDatabaseFile(storePath)
    await backup(source, storePath, { rate: PAGES_PER_STEP, progress: ({ remainingPages }) => void (remaining = remainingPages) })
  } catch (err) {
    throw new OperationError(`the restore failed, and the store is as it was: ${reason(err)}`)
  } finally {
    stopReporting()
    source.close()
  }
  const seconds = (performance.now() - started) / 1000
  return `restored ${backupPath} into ${storePath}: ${mebibytes(pages * pageSize)} MiB in ${seconds.toFixed(1)} s; start the service`
}
