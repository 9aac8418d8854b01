import cluster from 'node:cluster'
import { enableCompileCache } from 'node:module'
import { getSystemErrorMessage } from 'node:util'
import type { Config } from './config.ts'

// A restart then loads the service from V8's code cache instead of compiling every module again.
// The reader threads use it too: a thread takes the cache's folder only from the environment.
const { directory } = enableCompileCache()
if (directory !== undefined) process.env.NODE_COMPILE_CACHE = directory
const { ConfigError, loadConfig, readEnv } = await import('./config.ts')
const { StoreUnavailableError } = await import('./store/store.ts')

let config: Config
try {
  config = loadConfig(readEnv())
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(`Configuration error: ${err.message}`)
  process.exit(1)
}

// The service itself loads once the configuration is accepted, so a refusal is said at once; a
// primary that only starts and watches workers never loads the HTTP service at all.
const { runPrimary, workerMetrics } = await import('./cluster.ts')
try {
  if (config.workers > 1 && cluster.isPrimary) await runPrimary(config)
  else await (await import('./server.ts')).serve(config, cluster.isWorker ? { metrics: workerMetrics() } : {})
} catch (err) {
  if (err instanceof StoreUnavailableError) {
    console.error(`Store unavailable at start-up: ${(err.cause as Error).message}`)
    process.exit(1)
  }
  // A port another process holds, or one below 1024 without the right to it; a worker of a
  // cluster hears of it from the primary, which binds the port (`bind`).
  const { syscall, code, errno } = err as NodeJS.ErrnoException
  if ((syscall !== 'listen' && syscall !== 'bind') || errno === undefined) throw err
  console.error(`Cannot listen on ${config.host}:${config.port}: ${getSystemErrorMessage(errno)} (${code})`)
  process.exit(1)
}
