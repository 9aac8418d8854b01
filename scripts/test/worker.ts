/**
 * A process of `npm test` (scripts/test.ts): runs the test files it is handed one after another,
 * each with the spec reporter, and tells the runner what the reporter writes and each file's end.
 */
import { run } from 'node:test'
import { spec } from 'node:test/reporters'
import { fileEnded } from '../../test/support/file-end.ts'
import { NO_TESTS, type FileCounts, type FileEnd, type RunnerMessage, type WorkerMessage } from './worker-protocol.ts'

const tell = (message: WorkerMessage) => process.send?.(message)

/** What the event loop held before the file began: the process's own channel and output. */
let before: string[] = []

/** What the event loop holds now that it did not before the file began. */
function heldByFile(): string[] {
  const left = [...before]
  return process.getActiveResourcesInfo().filter((resource) => {
    const at = left.indexOf(resource)
    if (at !== -1) left.splice(at, 1)
    return at === -1
  })
}

async function runFile(file: string): Promise<FileEnd> {
  const started = performance.now()
  before = process.getActiveResourcesInfo()
  // The file's run ends when nothing but the channel to the runner is left to wait for, as a
  // file's own process would exit.
  process.channel?.unref()
  const stream = run({ files: [file], isolation: 'none' })
  let counts: FileCounts | undefined
  stream.on('test:summary', (summary: { counts: FileCounts }) => (counts = summary.counts))
  for await (const chunk of stream.compose(spec)) tell({ output: String(chunk) })
  // What the file's support modules hold (services, stores, folders) goes before the next file.
  const cleanedUp = await fileEnded().then(
    () => true,
    (err: unknown) => {
      tell({ output: `✖ ${file}: cleaning up after it failed: ${err instanceof Error ? err.stack : String(err)}\n` })
      return false
    },
  )
  process.channel?.ref()
  // A file whose run never summed up, or that left what could not be cleaned up, failed as a whole.
  const summed = counts ?? NO_TESTS
  const failedAsWhole = counts === undefined || !cleanedUp ? 1 : 0
  return { file, counts: { ...summed, failed: summed.failed + failedAsWhole }, durationMs: performance.now() - started }
}

process.on('message', (message: RunnerMessage) => {
  if (message === 'holding') tell({ holding: heldByFile() })
  else void runFile(message.file).then((end) => tell({ end }))
})
// Asks for the first file: one sent before this process listened would be lost.
tell('ready')
// The tests may leave a handle open; the files are done when the runner lets go.
process.on('disconnect', () => process.exit())
