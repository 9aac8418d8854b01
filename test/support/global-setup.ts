import { postgresUnreachableReason } from './postgres.ts'

let skipped: string | undefined

/** Without CI, an unreachable PostgreSQL skips its tests; CI must run them. */
export async function globalSetup(): Promise<void> {
  skipped = await postgresUnreachableReason()
  if (skipped !== undefined && process.env.CI === 'true') {
    throw new Error(`CI=true needs PostgreSQL for its tests: ${skipped}`)
  }
}

/** Said once, after the summary, so a passing run does not hide what it left out. */
export async function globalTeardown(): Promise<void> {
  if (skipped !== undefined) console.log(`PostgreSQL tests skipped: ${skipped}; set TEST_DATABASE_URL to run them`)
}
