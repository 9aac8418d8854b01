import { resolve } from 'node:path'

/** What every process a test starts takes from the suite's environment, whatever else it is given. */
export function suiteEnv(): Record<string, string> {
  const { PATH, NODE_V8_COVERAGE, NODE_COMPILE_CACHE } = process.env
  return {
    PATH: PATH ?? '',
    // Under `--experimental-test-coverage` the child's own code counts too.
    ...(NODE_V8_COVERAGE && { NODE_V8_COVERAGE }),
    // The suite's compiled code, kept between processes: each of the hundreds of processes the
    // tests start would otherwise strip and compile the same sources again.
    ...(NODE_COMPILE_CACHE && { NODE_COMPILE_CACHE: resolve(NODE_COMPILE_CACHE) }),
  }
}
