import { join } from 'node:path'
import { measureSection } from '../measure.ts'
import { read } from '../operations.ts'
import type { Suite } from '../suites.ts'

const suite: Suite = {
  description: 'GET /book/{id} with LOG_LEVEL=info, the default: a log line per request',
  async run(context) {
    const options = { dbUrl: `sqlite:${join(context.work, 'logs.db')}`, logLevel: 'info' }
    return { sections: [await measureSection('SQLite, `LOG_LEVEL=info`', options, [read], context)] }
  },
}
export default suite
