/** `book-catalogue`: the command-line tool of the book catalogue service (docs/client.md), run by bin/book-catalogue.js. */
import { CommanderError } from 'commander'
import { EXIT, failureOf } from './exit.ts'
import { buildProgram } from './program.ts'

const interrupt = new AbortController()
process.once('SIGINT', () => interrupt.abort(Object.assign(new Error('interrupted'), { name: 'AbortError' })))
// A reader that stops early (`| head`) ends the command quietly, as it ends cat.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.ok)
  throw err
})

let credentials: Parameters<typeof failureOf>[1] = { kind: 'none', url: '' }
const program = buildProgram(
  {
    // Opened when a command first uses them: most never read stdin, and many write nothing to
    // stderr (docs/client.md#figures).
    get stdin() {
      return process.stdin
    },
    stdout: process.stdout,
    get stderr() {
      return process.stderr
    },
    env: process.env,
    signal: interrupt.signal,
  },
  (context) => {
    credentials = context.credentials
  },
  process.argv.slice(2),
)

try {
  await program.parseAsync(process.argv)
  process.exitCode = EXIT.ok
} catch (err) {
  if (err instanceof CommanderError) {
    // Commander has said what was wrong; help and the version are not failures.
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage
  } else {
    const { code, lines } = failureOf(err, credentials)
    process.stderr.write(lines.map((line, n) => (n === 0 ? `book-catalogue: ${line}` : line)).join('\n') + '\n')
    if (process.env.BOOKS_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`)
    process.exitCode = code
  }
}
