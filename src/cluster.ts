import cluster, { type Worker } from 'node:cluster'
import { createServer } from 'node:net'
import { pino } from 'pino'
import { AggregatorRegistry } from 'prom-client'
import type { Config } from './config.ts'
import { Lifecycle } from './lifecycle.ts'
import { loggerOptions } from './observability/logger.ts'
import { createMetrics, type Metrics } from './observability/metrics.ts'
import { openStore } from './store/open.ts'

const METRICS_REQUEST = 'book-catalogue:metrics-request'
const METRICS_ANSWER = 'book-catalogue:metrics-answer'
const METRICS_TIMEOUT_MS = 5000

/** A worker that dies sooner than this after starting counts as failing at start-up. */
const STABLE_AFTER_MS = 10_000
const FIRST_RESTART_DELAY_MS = 100
const MAX_RESTART_DELAY_MS = 30_000
/** Beyond the workers' own delay and grace period, before the primary kills them. */
const EXIT_MARGIN_MS = 5000

/**
 * Each worker's part of an instance's whole, such as `DB_POOL_SIZE` or `MAX_STREAMS`, so that
 * `WORKERS` never multiplies it: as even as can be, the whole of it shared out, one at least each.
 */
export function evenShares(total: number, workers: number): number[] {
  return Array.from({ length: workers }, (_, slot) => Math.max(1, Math.floor(total / workers) + (slot < total % workers ? 1 : 0)))
}

/** How long to wait before replacing a dead worker, after `earlyDeaths` workers in a row died early. */
export function restartDelayMs(earlyDeaths: number): number {
  return Math.min(FIRST_RESTART_DELAY_MS * 2 ** earlyDeaths, MAX_RESTART_DELAY_MS)
}

/**
 * Fails, as listening does, when the port cannot be taken (held by another process, or below 1024
 * without the right to it): the instance then stops with one line, where every worker would die
 * at start-up and be started again for ever. The primary takes the port only for a moment.
 */
async function ensureListenable({ port, host }: Config): Promise<void> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ port, host, exclusive: true }, resolve)
  })
  await new Promise((resolve) => server.close(resolve))
}

interface MetricsRequest {
  type: typeof METRICS_REQUEST
  id: number
}
interface MetricsAnswer {
  type: typeof METRICS_ANSWER
  id: number
  text?: string
  error?: string
}

/**
 * The primary of `WORKERS=n`: migrates the store once, forks the workers that share the port,
 * each with its share of `DB_POOL_SIZE` and `MAX_STREAMS`, restarts any that dies (backing off while they keep
 * dying early), answers the workers' requests for the metrics of all of them, and on SIGTERM or
 * SIGINT passes the signal on to every worker, each of which drains as a single process does,
 * then exits once they all have. A signal during the migrations lets them finish and exits 0 before starting any worker.
 */
export async function runPrimary(config: Config, lifecycle: Lifecycle = new Lifecycle(config)): Promise<void> {
  const log = pino(loggerOptions({ level: config.logLevel, production: config.production }))
  lifecycle.handleSignals()
  for (const notice of config.notices) log.warn(notice)

  let migrated = false
  void lifecycle.stopRequested.then((signal) => {
    if (!migrated) log.info({ signal }, 'stop requested during start-up: stopping once the store is ready')
  })
  await (await openStore(config)).close()
  migrated = true
  if (lifecycle.draining) {
    log.info({ signal: await lifecycle.stopRequested }, 'stopped during start-up, before starting workers')
    process.exit(0)
  }
  await ensureListenable(config)

  // Generated secrets are decided once here, so a token issued by one worker verifies in every other.
  const env = { SECRET_TOKEN: config.secret, AUTH_USERNAME: config.username, AUTH_PASSWORD: config.password, WORKERS: '1' }
  const shares = evenShares(config.dbPoolSize, config.workers)
  const streamShares = evenShares(config.maxStreams, config.workers)
  const startedAt = new Map<number, number>()
  /** Each worker's slot: a worker that replaces a dead one takes its slot, and so its shares. */
  const slots = new Map<number, number>()
  const fork = (slot: number) => {
    const worker = cluster.fork({ ...env, DB_POOL_SIZE: String(shares[slot]), MAX_STREAMS: String(streamShares[slot]) })
    startedAt.set(worker.id, Date.now())
    slots.set(worker.id, slot)
  }

  const stopping = () => lifecycle.draining
  let everyExitClean = true
  let earlyDeaths = 0
  cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => {
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0)
    const slot = slots.get(worker.id)!
    startedAt.delete(worker.id)
    slots.delete(worker.id)
    if (stopping()) {
      if (code !== 0) everyExitClean = false
      if (startedAt.size === 0) {
        log.info('all workers stopped')
        process.exit(everyExitClean ? 0 : 1)
      }
      return
    }
    earlyDeaths = lived < STABLE_AFTER_MS ? earlyDeaths + 1 : 0
    const delay = restartDelayMs(earlyDeaths)
    log.error({ workerPid: worker.process.pid, code, signal, restartInMs: delay }, 'worker died: starting another')
    setTimeout(() => {
      if (!stopping()) fork(slot)
    }, delay)
  })

  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker: Worker, message: MetricsRequest) => {
    if (message?.type !== METRICS_REQUEST) return
    const answer = (fields: Partial<MetricsAnswer>) => {
      if (worker.isConnected()) worker.send({ type: METRICS_ANSWER, id: message.id, ...fields })
    }
    aggregator.clusterMetrics().then(
      (text) => answer({ text }),
      (err: unknown) => answer({ error: String(err) }),
    )
  })

  void lifecycle.stopRequested.then((signal) => {
    log.info({ signal, workers: startedAt.size }, 'shutting down: the workers drain')
    if (startedAt.size === 0) process.exit(0)
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
    setTimeout(
      () => {
        log.error('workers did not stop in time: killing them')
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL')
        process.exit(1)
      },
      config.shutdownDelayMs + config.shutdownGraceMs + EXIT_MARGIN_MS,
    ).unref()
  })

  log.info({ workers: config.workers, poolShares: shares }, 'starting workers')
  for (let slot = 0; slot < config.workers; slot++) fork(slot)
}

/** A worker's metrics: `GET /metrics` on any worker answers the sum over every worker. */
export function workerMetrics(): Metrics {
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>()
  let nextId = 0
  process.on('message', (message: MetricsAnswer) => {
    if (message?.type !== METRICS_ANSWER) return
    const waiting = pending.get(message.id)
    if (message.text !== undefined) waiting?.resolve(message.text)
    else waiting?.reject(new Error(message.error ?? 'no metrics from the primary'))
  })

  const askPrimary = () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error('the primary did not answer with metrics in time'))
      }, METRICS_TIMEOUT_MS)
      const settle = () => {
        clearTimeout(timer)
        pending.delete(id)
      }
      pending.set(id, {
        resolve: (text) => {
          settle()
          resolve(text)
        },
        reject: (err) => {
          settle()
          reject(err)
        },
      })
      process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsRequest)
    })

  const metrics = createMetrics({ render: askPrimary })
  // Constructing an AggregatorRegistry in a worker makes it answer the primary's
  // collection requests with the registries set here.
  AggregatorRegistry.setRegistries([metrics.registry])
  new AggregatorRegistry()
  return metrics
}
