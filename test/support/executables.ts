import { existsSync } from 'node:fs'

/**
 * Whether a test that needs the program at `path` must be skipped: a reason saying so when the
 * program is missing, except under CI=true, where the test runs and fails on the missing program.
 */
export function skipWithout(path: string, debianPackage: string): string | false {
  if (existsSync(path) || process.env.CI === 'true') return false
  return `SKIPPED: no ${path} (install the Debian package "${debianPackage}"; under CI=true this test fails instead)`
}

/** Fails with a clear message when the program at `path` is missing. */
export function requireExecutable(path: string, debianPackage: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: install the Debian package "${debianPackage}"`)
}
