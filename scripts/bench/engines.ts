import { createDatabase, dropDatabase } from './postgres.ts'
import type { Section } from './report.ts'
import type { ServiceOptions } from './service.ts'

/**
 * The PostgreSQL section, on a database made for this run and dropped after it. Skipped, with
 * the reason, when the server is not reachable or the service does not start on it.
 */
export async function postgresSection(
  name: string,
  run: (options: ServiceOptions) => Promise<Section>,
  log: (line: string) => void,
): Promise<Section> {
  const skipped = (reason: string): Section => {
    log(`PostgreSQL: skipped, ${reason}`)
    return { title: 'PostgreSQL', note: `skipped, ${reason}`, measurements: [] }
  }
  const database = await createDatabase(name)
  if ('skip' in database) return skipped(database.skip)
  try {
    return await run({ dbUrl: database.url })
  } catch (err) {
    const lines = (err as Error).message.split('\n').filter((line) => line.trim() !== '')
    const cause = lines.find((line) => /^\s*\w*Error\b/.test(line)) ?? lines.at(-1)
    return skipped(`the service did not run on ${database.url}: ${cause?.trim().slice(0, 200)}`)
  } finally {
    await dropDatabase(name)
  }
}
