/** `npm run backup -- PATH`: copies the SQLite store that DB_URL names to PATH, while the service runs. */
import { backupStore } from '../src/operations/backup.ts'
import { runCommand } from '../src/operations/command.ts'

await runCommand('backup', (storePath, path, say) => backupStore(storePath, path, say))
