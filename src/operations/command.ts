import { resolve } from 'node:path'
import { ConfigError, readDbUrl, readEnv } from '../config.ts'
import { OperationError } from './operation-error.ts'
import { storeFile, type StoreCommand } from './store-file.ts'

/** What a command does with the store's file and the path it was given; resolves with its last line. */
export type StoreOperation = (storePath: string, path: string, say: (line: string) => void) => Promise<string>

/**
 * `npm run backup -- PATH` and `npm run restore -- PATH`: finds the store as the service would
 * (`DB_URL`, the environment over `.env` in the working directory), reads PATH from where npm was
 * run, and ends with one line saying what was done (exit code 0) or why not (exit code 1).
 */
export async function runCommand(command: StoreCommand, operation: StoreOperation, args = process.argv.slice(2)): Promise<void> {
  try {
    if (args.length !== 1 || args[0] === '') throw new OperationError(`usage: npm run ${command} -- PATH`)
    const storePath = storeFile(readDbUrl(readEnv()), command)
    // npm runs scripts in the project's folder, and says in INIT_CWD where it was run from.
    const path = resolve(process.env.INIT_CWD ?? process.cwd(), args[0]!)
    console.log(await operation(storePath, path, (line) => console.log(line)))
  } catch (err) {
    const known = err instanceof OperationError || err instanceof ConfigError
    console.error(known ? err.message : `${command} failed: ${(err as Error).message}`)
    process.exitCode = 1
  }
}
