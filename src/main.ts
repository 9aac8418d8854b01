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

await serve(config)
