/**
 * The commands and their options. Each command's code is loaded only when it runs, so that a
 * command starts with no more than it needs.
 */
import { Command, InvalidArgumentError, Option } from 'commander'
import { contextOf, type Context, type Terminal } from './context.ts'

/** An integer option or argument from `min` to `max`, or a usage error naming what it should be. */
function integer(what: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`${what} must be an integer from ${min} to ${max}`)
    }
    return Number(value)
  }
}

const year = integer('a year', -9999, 9999)
const id = integer('an id', 1, Number.MAX_SAFE_INTEGER)
const ids = (value: string, previous: number[] = []) => [...previous, id(value)]
const limit = integer('the limit', 1, Number.MAX_SAFE_INTEGER)
const ROLES = ['reader', 'editor', 'admin']

const EXIT_CODES = `
Exit codes: 0 done; 1 refused (by the service, or a file that cannot be read);
2 wrong usage; 3 the service cannot be reached or failed (5xx); 130 interrupted.`

const ENVIRONMENT = `
Environment: BOOKS_URL (the service, default http://localhost:8080, or the one of
the latest login), BOOKS_KEY (a key, sent instead of the login's token),
BOOKS_PASSWORD (the password of login). The token of a login is kept in
$XDG_CONFIG_HOME/book-catalogue (or ~/.config/book-catalogue), readable by you alone.`

/** The commands, for `commandOf`: one missing here is declared with all the others, a little slower. */
const COMMANDS = [
  'login',
  'logout',
  'find',
  'show',
  'add',
  'edit',
  'rm',
  'restore',
  'revert',
  'history',
  'trash',
  'purge',
  'import',
  'export',
  'watch',
  'users',
  'keys',
]

type Handler = (context: Context, ...args: never[]) => Promise<void>

/**
 * The command `args` (the arguments after the program's name) run, when commander will surely
 * run it: the first, or the one after `--url`, and no help asked for. Undefined otherwise.
 */
function commandOf(args: string[]): string | undefined {
  const at = args[0] === '--url' ? 2 : args[0]?.startsWith('--url=') ? 1 : 0
  const name = args[at]
  if (name === undefined || !COMMANDS.includes(name) || args.includes('--help') || args.includes('-h')) return undefined
  return name
}

/**
 * Builds the program; `onContext` hears the context of the command that runs, to say what went
 * wrong in its terms. With `args`, the arguments after the program's name, and a command they
 * surely run, that command alone is declared: declaring all of them with their options took
 * commander 5 ms, a tenth of what a find adds to Node.js's own start (docs/client.md#figures).
 * Help, a mistake in the command's name, or none declares them all, as each needs.
 */
export function buildProgram(terminal: Terminal, onContext: (context: Context) => void, args?: string[]): Command {
  const only = args === undefined ? undefined : commandOf(args)
  const wanted = (name: string) => only === undefined || name === only
  const program = new Command('book-catalogue')
    .description('Find, change, import and export the books of a book catalogue service')
    .option('--url <url>', 'the service (default: BOOKS_URL, the latest login, or http://localhost:8080)')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `${EXIT_CODES}\n${ENVIRONMENT}`)
    .configureOutput({ writeOut: (text) => terminal.stdout.write(text), writeErr: (text) => terminal.stderr.write(text) })
    .exitOverride()

  /** The action that loads `handler` and runs it with the command's arguments and options. */
  const run =
    (load: () => Promise<Handler>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args.at(-1) as Command
      const context = contextOf(terminal, command.optsWithGlobals<{ url?: string }>().url)
      onContext(context)
      const handler = await load()
      await handler(context, ...(args.slice(0, -1) as never[]))
    }

  const shown = (command: Command, csv = true) => {
    command.addOption(new Option('--json', 'print JSON').conflicts('csv'))
    if (csv) command.addOption(new Option('--csv', 'print CSV').conflicts('json'))
    return command
  }
  const filtered = (command: Command) =>
    command
      .option('--title <text>', 'text contained in the title')
      .option('--author <text>', 'text contained in the author')
      .option('--year <year>', 'that year exactly', year)
      .option('--year-from <year>', 'that year or later', year)
      .option('--year-to <year>', 'that year or earlier', year)
      .option(
        '--sort <fields>',
        'a comma list of id, title, author, year; - in front for descending (default: relevance with words, else id)',
      )

  if (wanted('login'))
    program
      .command('login')
      .description('sign in and keep the token (the password from BOOKS_PASSWORD, or asked)')
      .requiredOption('--username <name>', 'who signs in')
      .action(run(async () => (await import('./commands/session.ts')).login))
  if (wanted('logout'))
    program
      .command('logout')
      .description('forget the token kept for the service')
      .action(run(async () => (await import('./commands/session.ts')).logout))

  if (wanted('find'))
    shown(
      filtered(
        program
          .command('find')
          .description('find books and print them; every word must begin a word of the title or author')
          .argument('[words...]', 'words to find (q), case and accents ignored'),
      )
        .option('--limit <n>', 'print at most n books (default: every match)', limit)
        .option('--count', 'say on stderr how many books match in all'),
    ).action(run(async () => (await import('./commands/books.ts')).find))

  if (wanted('show'))
    shown(program.command('show').description('print one book').argument('<id>', 'the book', id)).action(
      run(async () => (await import('./commands/books.ts')).show),
    )
  if (wanted('add'))
    shown(
      program
        .command('add')
        .description('store a new book')
        .requiredOption('--title <title>', 'its title')
        .requiredOption('--author <author>', 'its author')
        .requiredOption('--year <year>', 'its year', year),
    ).action(run(async () => (await import('./commands/books.ts')).add))
  if (wanted('edit'))
    shown(
      program
        .command('edit')
        .description('change a book: only what is given')
        .argument('<id>', 'the book', id)
        .option('--title <title>', 'the new title')
        .option('--author <author>', 'the new author')
        .option('--year <year>', 'the new year', year),
    ).action(run(async () => (await import('./commands/books.ts')).edit))
  if (wanted('rm'))
    program
      .command('rm')
      .description('delete books: they wait in the trash, where restore takes them back')
      .argument('<ids...>', 'the books', ids)
      .action(run(async () => (await import('./commands/books.ts')).rm))
  if (wanted('restore'))
    shown(program.command('restore').description('take books back from the trash').argument('<ids...>', 'the books', ids)).action(
      run(async () => (await import('./commands/books.ts')).restore),
    )
  if (wanted('revert'))
    shown(
      program
        .command('revert')
        .description('give a book the values it had after one of its changes (see history)')
        .argument('<id>', 'the book', id)
        .argument('<seq>', 'the change', integer('seq', 1, Number.MAX_SAFE_INTEGER)),
    ).action(run(async () => (await import('./commands/books.ts')).revert))
  if (wanted('history'))
    shown(
      program
        .command('history')
        .description("print a book's changes, newest first")
        .argument('<id>', 'the book', id)
        .option('--limit <n>', 'print at most n changes', limit),
    ).action(run(async () => (await import('./commands/books.ts')).history))
  if (wanted('trash'))
    shown(
      program.command('trash').description('print the deleted books, latest first').option('--limit <n>', 'print at most n books', limit),
    ).action(run(async () => (await import('./commands/books.ts')).trash))
  if (wanted('purge'))
    program
      .command('purge')
      .description('remove books from the trash for good, with their history (admins)')
      .argument('<ids...>', 'the books', ids)
      .action(run(async () => (await import('./commands/books.ts')).purge))

  if (wanted('import'))
    shown(
      program
        .command('import')
        .description('check a file, then import its books, all or nothing, with a progress bar')
        .argument('<file>', 'a CSV, TSV, NDJSON or JSON file, or the export of another catalogue (docs/api.md)')
        .addOption(
          new Option('--format <format>', 'the format, when the name does not end in it').choices(['csv', 'tsv', 'ndjson', 'json']),
        )
        .option('--skip-invalid', 'import the valid rows and leave out the others')
        .option('--skip-duplicates', 'leave out rows that repeat a stored book or an earlier row')
        .option('--columns <spec>', 'the headers to read, as title:<header>,author:<header>,year:<header>')
        .option('--no-check', 'import at once, without checking the file first')
        .option('-y, --yes', 'do not ask before importing what the check found'),
      false,
    ).action(run(async () => (await import('./commands/transfer.ts')).importFile))
  if (wanted('export'))
    filtered(
      program
        .command('export')
        .description('write every book, or those words and filters find, as CSV or NDJSON')
        .argument('[words...]', 'words to find (q)')
        .addOption(new Option('--format <format>', 'the format').choices(['csv', 'ndjson']).default('csv'))
        .option('-o, --output <file>', 'the file to write (default: stdout)'),
    ).action(run(async () => (await import('./commands/transfer.ts')).exportBooks))

  if (wanted('watch'))
    program
      .command('watch')
      .description('print each change of every book as it commits, one line each, until Ctrl-C')
      .option(
        '--since <seq>',
        'start after this change, as history and earlier watches number them (default: from now on)',
        integer('seq', 0, Number.MAX_SAFE_INTEGER),
      )
      .option('--json', 'print each change as a line of JSON')
      .action(run(async () => (await import('./commands/watch.ts')).watch))

  if (wanted('users')) {
    const users = program.command('users').description('the users of the catalogue (admins; anyone for their own password)')
    shown(users.command('list', { isDefault: true }).description('list the users')).action(
      run(async () => (await import('./commands/accounts.ts')).listUsers),
    )
    shown(users.command('show').description('print one user').argument('<username>')).action(
      run(async () => (await import('./commands/accounts.ts')).showUser),
    )
    shown(
      users
        .command('add')
        .description('create a user; the password is asked twice, or read from stdin')
        .argument('<username>')
        .addOption(new Option('--role <role>', 'what they may do').choices(ROLES).makeOptionMandatory()),
    ).action(run(async () => (await import('./commands/accounts.ts')).addUser))
    shown(
      users
        .command('set')
        .description("change a user's role, or a password (your own needs the current one)")
        .argument('<username>')
        .addOption(new Option('--role <role>', 'the new role').choices(ROLES))
        .option('--password', 'set a new password, asked twice or read from stdin'),
    ).action(run(async () => (await import('./commands/accounts.ts')).setUser))
    users
      .command('rm')
      .description('delete a user and revoke their keys')
      .argument('<username>')
      .action(run(async () => (await import('./commands/accounts.ts')).removeUser))
  }

  if (wanted('keys')) {
    const keys = program.command('keys').description('keys for programs, sent as BOOKS_KEY')
    shown(keys.command('list', { isDefault: true }).description('list your keys (an admin: everyone’s)')).action(
      run(async () => (await import('./commands/accounts.ts')).listKeys),
    )
    shown(
      keys
        .command('add')
        .description('create a key and print it, this once')
        .argument('<name>')
        .addOption(new Option('--role <role>', 'what it may do: yours or lower').choices(ROLES).makeOptionMandatory())
        .option('--expires-in-days <days>', 'when it stops working (default: never)', integer('the days', 1, 3650)),
      false,
    ).action(run(async () => (await import('./commands/accounts.ts')).addKey))
    keys
      .command('rm')
      .description('revoke a key')
      .argument('<id>', 'the key', id)
      .action(run(async () => (await import('./commands/accounts.ts')).revokeKey))
  }

  // Every subcommand reports its errors and help as the program does.
  for (const command of program.commands.flatMap((command) => [command, ...command.commands])) {
    command
      .exitOverride()
      .configureOutput({ writeOut: (text) => terminal.stdout.write(text), writeErr: (text) => terminal.stderr.write(text) })
    command.showHelpAfterError('(run with --help for usage)')
  }
  return program
}
