import cluster from 'node:cluster'
import { runPrimary, workerMetrics } from './cluster.ts'
import { ConfigError, loadConfig, readEnv, type Config } from './config.ts'
import { serve } from './server.ts'

let config: Config
try {
  config = loadConfig(readEnv())
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(`Configuration error: ${err.message}`)
  process.exit(1)
}

if (config.workers > 1 && cluster.isPrimary) await runPrimary(config)
else await serve(config, cluster.isWorker ? { metrics: workerMetrics() } : {})
