import { after } from 'node:test'

const cleanups: (() => unknown)[] = []

/**
 * Runs `cleanup` when each test file ends. A module's own `after` hook would run once, at the end
 * of the first file that imports it: `npm test` runs many files in one process (scripts/test.ts),
 * and the module is not evaluated again for the next. Call it once, at the module's top.
 */
export function atFileEnd(cleanup: () => unknown): void {
  // The end of the file that imports the first such module: under `node --test`, the only file
  // of the process. Not on this module's import, which would start the tests of a process that
  // runs files itself.
  if (cleanups.length === 0) after(fileEnded)
  cleanups.push(cleanup)
}

/** Runs every cleanup, in the order they were added; `npm test`'s worker calls it after each file. */
export async function fileEnded(): Promise<void> {
  for (const cleanup of cleanups) await cleanup()
}
