/**
 * Builds the catalogue page into web/dist: one bundled, minified script and style sheet with
 * content-hashed names, the HTML that names them, and gzip and Brotli copies of every file
 * for the service to send as they are.
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

/** The budget for the page's JavaScript, gzipped. */
const SCRIPT_BUDGET_BYTES = 60 * 1024

const WEB = fileURLToPath(new URL('.', import.meta.url))
const SRC = join(WEB, 'src')
const DIST = join(WEB, 'dist')

/** The same 8-character form esbuild gives its outputs, so one pattern recognises every fingerprint. */
function fingerprint(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 8).toUpperCase()
}

async function buildPage(): Promise<void> {
  await rm(DIST, { recursive: true, force: true })
  await mkdir(DIST, { recursive: true })

  const result = await build({
    entryPoints: [join(SRC, 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16.4'],
    entryNames: '[name]-[hash]',
    outdir: DIST,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  })
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path))
  const script = outputs.find((name) => name.endsWith('.js'))
  const styles = outputs.find((name) => name.endsWith('.css'))
  if (!script || !styles) throw new Error(`the build wrote no script or no style sheet: ${outputs.join(', ')}`)

  const iconSource = await readFile(join(SRC, 'icon.svg'))
  const icon = `icon-${fingerprint(iconSource)}.svg`
  await writeFile(join(DIST, icon), iconSource)

  const html = (await readFile(join(SRC, 'index.html'), 'utf8'))
    .replace('{{script}}', script)
    .replace('{{styles}}', styles)
    .replace('{{icon}}', icon)
  await writeFile(join(DIST, 'index.html'), html)

  for (const name of await readdir(DIST)) {
    const content = await readFile(join(DIST, name))
    await writeFile(join(DIST, `${name}.gz`), gzipSync(content, { level: 9 }))
    await writeFile(join(DIST, `${name}.br`), brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
  }

  const scriptGzipped = (await readFile(join(DIST, `${script}.gz`))).length
  console.log(`catalogue page built in ${DIST}: ${script} is ${(scriptGzipped / 1024).toFixed(1)} KiB gzipped`)
  if (scriptGzipped > SCRIPT_BUDGET_BYTES) {
    throw new Error(`${script} is ${scriptGzipped} bytes gzipped, over the budget of ${SCRIPT_BUDGET_BYTES}`)
  }
}

await buildPage()
