import { join } from 'node:path'
import { postgresSection } from '../engines.ts'
import { measureSection } from '../measure.ts'
import { everyOperation } from '../operations.ts'
import type { Suite } from '../suites.ts'

const suite: Suite = {
  description: 'every operation of the interface, on SQLite and on PostgreSQL',
  async run(context) {
    const sqlite = await measureSection('SQLite', { dbUrl: `sqlite:${join(context.work, 'crud.db')}` }, everyOperation, context)
    const postgres = await postgresSection(
      `bench_${process.pid}`,
      (options) => measureSection('PostgreSQL', options, everyOperation, context),
      context.log,
    )
    return { sections: [sqlite, postgres] }
  },
}
export default suite
