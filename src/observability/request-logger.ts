import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Logger } from 'pino'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type LogMethod = (...args: unknown[]) => void

/**
 * A request's logger that makes pino's child logger (with the request id in every line) only
 * when the request writes a line at an enabled level. Making the child serialises its bindings,
 * through the redaction, for every request, which at LOG_LEVEL=warn writes no line at all.
 */
class LazyChildLogger {
  readonly #parent: Logger
  readonly #bindings: Record<string, unknown>
  #child: Logger | undefined

  constructor(parent: Logger, bindings: Record<string, unknown>) {
    this.#parent = parent
    this.#bindings = bindings
  }

  #real(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings))
  }

  get level(): string {
    return (this.#child ?? this.#parent).level
  }

  set level(level: string) {
    this.#real().level = level
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level)
  }

  child(...args: Parameters<FastifyBaseLogger['child']>): FastifyBaseLogger {
    return this.#real().child(...args)
  }

  silent(): void {}

  #write(level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return
    const write: LogMethod = this.#real()[level]
    write.apply(this.#real(), args)
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args)
  }

  error(...args: unknown[]): void {
    this.#write('error', args)
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args)
  }

  info(...args: unknown[]): void {
    this.#write('info', args)
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args)
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args)
  }
}

/**
 * Fastify's `childLoggerFactory`; its logger is pino's. A route's own level or serialisers get
 * pino's child at once.
 */
export const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  options.level !== undefined || options.serializers !== undefined
    ? logger.child(bindings, options)
    : new LazyChildLogger(logger as Logger, bindings)
