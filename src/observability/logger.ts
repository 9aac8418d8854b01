import type { FastifyLoggerOptions, FastifyServerOptions } from 'fastify'

type LogStream = NonNullable<FastifyLoggerOptions['stream']>
type PinoOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>

export interface LoggerSettings {
  level: string
  production: boolean
  /** Where JSON lines go instead of stdout; tests read them from here. */
  stream?: LogStream | undefined
}

/** Anything under these paths is replaced before a line is written, whoever logs it. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'password',
  'token',
  'secret',
  '*.password',
  '*.token',
  '*.secret',
]

function prettyPrinterInstalled(): boolean {
  try {
    import.meta.resolve('pino-pretty')
    return true
  } catch {
    return false
  }
}

/**
 * JSON lines, except for a person at a terminal outside production, who gets
 * pino-pretty when it is installed (it is a development dependency).
 */
export function loggerOptions(settings: LoggerSettings, interactive = process.stdout.isTTY === true) {
  const options: PinoOptions = {
    level: settings.level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  }
  if (settings.stream) options.stream = settings.stream
  else if (interactive && !settings.production && prettyPrinterInstalled()) {
    options.transport = { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } }
  }
  return options
}
