import { join } from 'node:path'
import { measureScale, scaleTable } from '../list-at-scale.ts'
import type { Suite } from '../suites.ts'

const DEFAULT_SIZES = '10000,100000,1000000'

const suite: Suite = {
  description: 'GET /books of the whole list at 10k, 100k and 1M books (--scale=N,N,… for others)',
  async run(context) {
    const option = context.options.scale ?? process.env.BENCH_SCALE ?? DEFAULT_SIZES
    const sizes = String(option).split(',').map(Number)
    if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error(`--scale takes sizes such as ${DEFAULT_SIZES}`)
    context.log('GET /books at scale (SQLite)')
    const points = await measureScale(join(context.work, 'scale.db'), sizes, context.serverCpus, context.log)
    return { sections: [], tables: [scaleTable(points)], data: points }
  },
}
export default suite
