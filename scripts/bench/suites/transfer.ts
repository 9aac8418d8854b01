import { measureTransfer, transferTable } from '../transfer.ts'
import type { Suite } from '../suites.ts'

const suite: Suite = {
  description:
    'a 100,000-row CSV import on each engine, peak RSS through a 31 MiB import, and an export of 1,000,000 books (--rows=N, --export=N for others)',
  async run(context) {
    const rows = Number(context.options.rows ?? 100_000)
    const exportBooks = Number(context.options.export ?? 1_000_000)
    if (!Number.isSafeInteger(rows) || rows < 1 || !Number.isSafeInteger(exportBooks) || exportBooks < 0) {
      throw new Error('--rows takes a count of at least 1, --export a count of at least 0')
    }
    context.log('Import and export')
    const figures = await measureTransfer({ rows, exportBooks, engines: ['sqlite', 'postgres'], log: context.log })
    return { sections: [], tables: [transferTable(figures)], data: figures }
  },
}
export default suite
