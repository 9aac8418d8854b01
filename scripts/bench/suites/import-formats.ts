import { formatImportTable, importMemoryTable, measureFormatImports, measureImportMemory } from '../import-formats.ts'
import type { Suite } from '../suites.ts'

const suite: Suite = {
  description:
    'a 100,000-row Goodreads library export on each engine: a dry run, an import with invalid=skip, one with duplicates=skip too, and that file again, rows/s and peak RSS (--rows=N for another size); then a 100,000-book file of each other kind an import reads, and its peak RSS',
  async run(context) {
    const rows = Number(context.options.rows ?? 100_000)
    if (!Number.isSafeInteger(rows) || rows < 1) throw new Error('--rows takes a count of at least 1')
    context.log('Importing a Goodreads export')
    const engines = ['sqlite', 'postgres']
    const figures = await measureFormatImports({ rows, engines, log: context.log })
    context.log('Importing a file of every other kind')
    const memory = await measureImportMemory({ engines, log: context.log })
    return { sections: [], tables: [formatImportTable(figures), importMemoryTable(memory)], data: { rates: figures, memory } }
  },
}
export default suite
