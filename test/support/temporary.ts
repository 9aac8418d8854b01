import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { atFileEnd } from './file-end.ts'

const made = new Set<string>()

atFileEnd(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
  made.clear()
})

/** A new empty directory under the system's temporary folder, removed when the test file ends. */
export function temporaryDirectory(prefix = 'books-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.add(dir)
  return dir
}

/** Removes `dir` now rather than at the end of the file. */
export function removeDirectory(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
  made.delete(dir)
}

/**
 * Databases dropped when the suite this is called in ends, after its tests' own `t.after` hooks.
 * A test's hooks run in the order they were registered: a drop registered before the services or
 * stores on the database would run before they stop, and they would query tables already gone.
 * Call it while the suite is defined, at the top of its `describe` or of the file.
 */
export function droppedWhenSuiteEnds(): (database: { drop(): Promise<void> }) => void {
  const databases: { drop(): Promise<void> }[] = []
  after(() => Promise.all(databases.splice(0).map((database) => database.drop())))
  return (database) => void databases.push(database)
}
