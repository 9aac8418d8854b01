/** `npm run restore -- PATH`: puts the backup at PATH in place of the SQLite store that DB_URL names. */
import { runCommand } from '../src/operations/command.ts'
import { restoreStore } from '../src/operations/restore.ts'

await runCommand('restore', (storePath, path, say) => restoreStore(path, storePath, say))
