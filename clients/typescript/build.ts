/**
 * Builds the book-catalogue command into dist/: its TypeScript and commander in a few files of
 * JavaScript, each command's code in a chunk loaded only when it runs. Node.js would strip the
 * types of the sources on every start; the built files start in half the time (docs/client.md#figures).
 */
import { rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

export const DIST = fileURLToPath(new URL('dist/', import.meta.url))

/** Builds the command into `outdir`: `book-catalogue.js` and its chunks. */
export async function buildCommand(outdir = DIST): Promise<void> {
  await rm(outdir, { recursive: true, force: true })
  await build({
    entryPoints: { 'book-catalogue': fileURLToPath(new URL('src/cli/main.ts', import.meta.url)) },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    legalComments: 'none',
    logLevel: 'warning',
  })
}

if (import.meta.main) {
  await buildCommand()
  console.log(`book-catalogue command built in ${DIST}`)
}
