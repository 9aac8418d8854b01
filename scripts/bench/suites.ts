import { readdirSync } from 'node:fs'
import type { Section } from './report.ts'
import type { LoadOptions } from './wrk.ts'

/** What every suite is handed. */
export interface BenchContext {
  load: LoadOptions
  /** CPUs every server (the service, the ceiling) runs on, as `taskset -c` takes them. */
  serverCpus: string | undefined
  /** A temporary folder, removed after the run. */
  work: string
  /** Options given on the command line that the entry point does not know, for suites of their own. */
  options: Record<string, string | boolean | undefined>
  log: (line: string) => void
}

export interface SuiteResult {
  /** Measurements against the ceiling, printed as one table with every suite's. */
  sections: Section[]
  /** Anything else, printed as it is after that table. */
  tables?: string[]
  /** Written to the results file under the suite's name. */
  data?: unknown
}

/**
 * One part of the benchmark: `scripts/bench/suites/NAME.ts` exports it as default, and
 * `npm run bench -- NAME` runs it alone.
 */
export interface Suite {
  description: string
  run(context: BenchContext): Promise<SuiteResult>
}

const FOLDER = new URL('./suites/', import.meta.url)

/** The names of every suite, in the order a full run takes them. */
export function suiteNames(): string[] {
  return readdirSync(FOLDER)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.slice(0, -'.ts'.length))
    .sort()
}

export async function loadSuite(name: string): Promise<Suite> {
  return ((await import(new URL(`${name}.ts`, FOLDER).href)) as { default: Suite }).default
}
