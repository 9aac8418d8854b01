#!/usr/bin/env node
// The command as `npm run build:client` builds it, which starts in half the time of its
// TypeScript sources (docs/client.md#figures); the sources themselves when it is not built.
import { existsSync } from 'node:fs'
import module from 'node:module'

if (Number(process.versions.node.split('.')[0]) < 24) {
  process.stderr.write(
    `book-catalogue: needs Node.js 24 or later, not ${process.version}: run it as npx book-catalogue, which uses the project's own\n`,
  )
  process.exit(2)
}
// Compiled code is kept between runs: the command starts faster from its second run on.
module.enableCompileCache()
const built = new URL('../dist/book-catalogue.js', import.meta.url)
await import(existsSync(built) ? built.href : new URL('../src/cli/main.ts', import.meta.url).href)
