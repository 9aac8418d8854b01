import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, Server } from 'node:http'
import { setTimeout as wait } from 'node:timers/promises'

export const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const

export interface LifecycleSettings {
  shutdownDelayMs: number
  shutdownGraceMs: number
}

/** Where the lifecycle reads time from; tests end the waits when they choose. */
export interface Clock {
  wait(ms: number): Promise<void>
}

const realClock: Clock = { wait: (ms) => wait(ms, undefined, { ref: false }) }

/**
 * The process's way from running to stopped. The first SIGTERM or SIGINT starts draining: from
 * then on the instance is not ready and answers close their connection. Later signals change
 * nothing: a terminal's Ctrl-C reaches every process of a cluster and the primary forwards it
 * too, and an impatient orchestrator may repeat itself; neither may cut requests short.
 */
export class Lifecycle {
  readonly shutdownDelayMs: number
  readonly shutdownGraceMs: number
  readonly clock: Clock
  #signal: NodeJS.Signals | undefined
  readonly #stopRequested: PromiseWithResolvers<NodeJS.Signals> = Promise.withResolvers()
  readonly #repeated = new Set<(signal: NodeJS.Signals) => void>()

  constructor(settings: LifecycleSettings, clock: Clock = realClock) {
    this.shutdownDelayMs = settings.shutdownDelayMs
    this.shutdownGraceMs = settings.shutdownGraceMs
    this.clock = clock
  }

  /** True from the first shutdown signal on. */
  get draining(): boolean {
    return this.#signal !== undefined
  }

  /** Resolves with the first shutdown signal. */
  get stopRequested(): Promise<NodeJS.Signals> {
    return this.#stopRequested.promise
  }

  /** What a shutdown signal does; the signal handlers call it, and so may anything else. */
  requestStop(signal: NodeJS.Signals): void {
    if (this.#signal !== undefined) {
      for (const listener of this.#repeated) listener(signal)
      return
    }
    this.#signal = signal
    this.#stopRequested.resolve(signal)
  }

  /** Called for every shutdown signal after the first. */
  onRepeatedSignal(listener: (signal: NodeJS.Signals) => void): void {
    this.#repeated.add(listener)
  }

  /** Takes SIGTERM and SIGINT over from their default, which ends the process at once. */
  handleSignals(target: Pick<NodeJS.Process, 'on'> = process): void {
    for (const signal of SHUTDOWN_SIGNALS) target.on(signal, () => this.requestStop(signal))
  }
}

/**
 * The server's responses: from the stop on, every answer not yet begun carries `Connection: close`,
 * also for requests that arrived before it, so that clients and proxies open their next
 * connection elsewhere. Checked as an answer's head is written, which every answer's is, so that
 * no request needs a listener or an entry of its own for it.
 */
export function responsesClosingWhileDraining(lifecycle: Pick<Lifecycle, 'draining'>) {
  // From the loaded module: see src/http/status-codes.ts.
  const { ServerResponse } = process.getBuiltinModule('node:http')
  return class ClosingWhileDraining<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    override writeHead(
      statusCode: number,
      reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
      headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
    ): this {
      if (lifecycle.draining) this.setHeader('connection', 'close')
      // Node's writeHead takes the headers as its second argument when no reason is given.
      return super.writeHead(statusCode, reasonOrHeaders as string | undefined, headers)
    }
  }
}

/** What draining needs of the service: a Fastify instance fits. */
export interface Drainable {
  server: Server
  close(): Promise<unknown>
  log: {
    info(fields: object, message: string): void
    info(message: string): void
    warn(message: string): void
    error(fields: object, message: string): void
  }
}

/**
 * Drains `service` once a stop is requested: it keeps serving for the shutdown delay, then stops
 * listening and lets the requests in flight finish within the grace period, cutting those still
 * open after it. Resolves with the exit code: 0 when everything finished, 1 when connections had
 * to be cut or closing failed.
 */
export async function drain(service: Drainable, lifecycle: Lifecycle): Promise<0 | 1> {
  const signal = await lifecycle.stopRequested
  const { shutdownDelayMs: delayMs, shutdownGraceMs: graceMs } = lifecycle
  lifecycle.onRepeatedSignal((again) => service.log.info({ signal: again }, 'already shutting down: signal ignored'))
  service.log.info({ signal, delayMs, graceMs }, 'draining: not ready, still serving, closing each connection after its answer')
  if (delayMs > 0) await lifecycle.clock.wait(delayMs)

  // Closed here, before anything is said: once this returns, new connections are refused
  // outright. A connection the kernel had accepted but Node had not is reset, which is why the
  // delay comes first.
  service.server.close()
  service.log.info({ graceMs }, 'stopped listening: finishing requests in flight')

  let done = false
  let cut = false
  void lifecycle.clock.wait(graceMs).then(() => {
    if (done) return
    cut = true
    service.log.warn('grace period over: closing the connections still open')
    service.server.closeAllConnections()
  })
  try {
    await service.close()
  } catch (err) {
    service.log.error({ err }, 'shutdown failed')
    return 1
  } finally {
    done = true
  }
  service.log.info('stopped')
  return cut ? 1 : 0
}
