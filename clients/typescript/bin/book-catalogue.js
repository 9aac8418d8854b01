#!/usr/bin/env node
// The command as `npm run build:client` builds it, which starts in half the time of its
// TypeScript sources (docs/client.md#figures); the sources themselves when it is not built.
if (Number(process.versions.node.split('.')[0]) < 24) {
  process.stderr.write(
    `book-catalogue: needs Node.js 24 or later, not ${process.version}: run it as npx book-catalogue, which uses the project's own\n`,
  )
  process.exit(2)
}
// Taken rather than imported, as the built command takes Node.js's modules: an import of
// node:fs reads all its exports, and fs.promises loads readline and more (docs/client.md#figures).
const { existsSync } = process.getBuiltinModule('node:fs')
// Compiled code is kept between runs: the command starts faster from its second run on.
process.getBuiltinModule('node:module').enableCompileCache()
const built = new URL('../dist/book-catalogue.js', import.meta.url)
await import(existsSync(built) ? built.href : new URL('../src/cli/main.ts', import.meta.url).href)
