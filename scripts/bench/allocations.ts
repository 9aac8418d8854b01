/**
 * Bytes a benchmarked service allocates: this module is loaded into the service's process
 * (`node --import`), where it counts what the JavaScript heap grew by between collections, and
 * writes the total so far to the file named by BENCH_ALLOCATIONS_FILE whenever the process gets
 * SIGUSR2. `allocatedBytes(pid)` asks for it from the benchmark's side. The heap only shrinks
 * in a collection, so what it grew by from the end of one to the start of the next is exactly
 * what was allocated meanwhile; buffers outside the heap (socket writes) are not counted.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { GCProfiler, getHeapStatistics } from 'node:v8'
import { isMainThread } from 'node:worker_threads'

const FILE_VARIABLE = 'BENCH_ALLOCATIONS_FILE'
const SIGNAL = 'SIGUSR2'
const ANSWER_TIMEOUT_MS = 5000
const COUNT_EVERY_MS = 1000

const file = process.env[FILE_VARIABLE]
// The service's worker threads (SQLite's readers) have heaps of their own, not counted.
if (file !== undefined && isMainThread) {
  let total = 0
  let used = getHeapStatistics().used_heap_size
  let profiler = new GCProfiler()
  profiler.start()
  /** Adds what was allocated since the last call to the total. */
  const count = () => {
    const { statistics } = profiler.stop()
    profiler = new GCProfiler()
    profiler.start()
    for (const { beforeGC, afterGC } of statistics) {
      total += Math.max(0, beforeGC.heapStatistics.usedHeapSize - used)
      used = afterGC.heapStatistics.usedHeapSize
    }
    const now = getHeapStatistics().used_heap_size
    total += Math.max(0, now - used)
    used = now
  }
  // The profiler keeps a record of every collection until it is stopped: counted every second, a
  // service that is never asked (the soak's, a long export's) does not grow by those records.
  setInterval(count, COUNT_EVERY_MS).unref()
  process.on(SIGNAL, () => {
    count()
    // Renamed into place, so the benchmark never reads half a line.
    writeFileSync(`${file}.new`, `${process.hrtime.bigint()} ${total}`)
    renameSync(`${file}.new`, file)
  })
}

/** The preload and the environment that make the service at `file` count its allocations. */
export function countAllocations(file: string): { nodeOptions: string[]; env: Record<string, string> } {
  return { nodeOptions: ['--import', import.meta.url], env: { [FILE_VARIABLE]: file } }
}

/** The bytes the service `pid` has allocated since it started, as it writes them to `file`. */
export async function allocatedBytes(pid: number, file: string): Promise<number> {
  const read = () => {
    try {
      return readFileSync(file, 'utf8')
    } catch {
      return ''
    }
  }
  const before = read()
  process.kill(pid, SIGNAL)
  const deadline = Date.now() + ANSWER_TIMEOUT_MS
  for (;;) {
    const now = read()
    if (now !== before && now.includes(' ')) return Number(now.split(' ')[1])
    if (Date.now() > deadline) throw new Error(`the service ${pid} did not write its allocations to ${file}`)
    await sleep(10)
  }
}
