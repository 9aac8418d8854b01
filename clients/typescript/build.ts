/**
 * Builds the book-catalogue command into dist/: its TypeScript and commander in one file of
 * JavaScript, each command's code run only when it runs. Node.js would strip the types of the
 * sources on every start; the built file starts in half the time (docs/client.md#figures). One
 * file rather than a chunk for each command: a find loaded ten, and finding and reading each
 * took longer than the code of the commands it does not run, which is compiled only if called.
 */
import { rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'

export const DIST = fileURLToPath(new URL('dist/', import.meta.url))

/**
 * Node.js's modules taken with `process.getBuiltinModule`, as CommonJS, rather than imported.
 * Importing one makes its ES module, which reads every export it has, and a few of those are
 * getters that load more: `fs.promises` loads readline, `process.report` and `util.parseArgs`
 * their own modules, and commander imports fs, process and util. This way a module is loaded
 * and nothing more, and each export is read when it is used (docs/client.md#figures).
 */
const builtins: Plugin = {
  name: 'builtins',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, ({ path }) => ({ path, namespace: 'builtin' }))
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, ({ path }) => ({
      contents: COMMANDER_ONLY[path] ?? `module.exports = process.getBuiltinModule(${JSON.stringify(path)})`,
      loader: 'js',
    }))
  },
}

/**
 * The two modules only commander imports, as the little of them it uses. node:child_process,
 * which takes 6 ms to load with net and dgram, runs a subcommand's own executable, which this
 * command has none of: it is loaded if one ever runs. Of node:util, taken as CommonJS, esbuild
 * reads every export's descriptor, and reading those of `parseArgs`, `diff` and `setTraceSigInt`
 * loads their modules and worker_threads; an export commander takes that is not here fails the build.
 */
const COMMANDER_ONLY: Record<string, string> = {
  'node:child_process': `export function spawn(...args) { return process.getBuiltinModule('node:child_process').spawn(...args) }
export default { spawn }`,
  'node:util': `export const { stripVTControlCharacters } = process.getBuiltinModule('node:util')`,
}

/** Builds the command into `outdir`: `book-catalogue.js`. */
export async function buildCommand(outdir = DIST): Promise<void> {
  await rm(outdir, { recursive: true, force: true })
  await build({
    entryPoints: { 'book-catalogue': fileURLToPath(new URL('src/cli/main.ts', import.meta.url)) },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    outdir,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [builtins],
  })
}

if (import.meta.main) {
  await buildCommand()
  console.log(`book-catalogue command built in ${DIST}`)
}
