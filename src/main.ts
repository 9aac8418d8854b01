import cluster from 'node:cluster'
import { runPrimary, workerMetrics } from './cluster.ts'
import { ConfigError, loadConfig, readEnv, type Config } from './config.ts'
import { serve } from './server.ts'
import { StoreUnavailableError } from './store/store.ts'

let config: Config
try {
  config = loadConfig(readEnv())
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(`Configuration error: ${err.message}`)
  process.exit(1)
}

try {
  if (config.workers > 1 && cluster.isPrimary) await runPrimary(config)
  else await serve(config, cluster.isWorker ? { metrics: workerMetrics() } : {})
} catch (err) {
  if (!(err instanceof StoreUnavailableError)) throw err
  console.error(`Store unavailable at start-up: ${(err.cause as Error).message}`)
  process.exit(1)
}
