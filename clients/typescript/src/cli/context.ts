/** What every command works with: the service's address, its credentials, the client, and the terminal. */
import { BookCatalogue } from '../index.ts'
import { readSaved, saveSession } from './config.ts'
import { Refusal, type Credentials } from './exit.ts'
import { httpFetch } from './http-fetch.ts'

const DEFAULT_URL = 'http://localhost:8080'
/** A kept token is renewed by the first command run once it is five minutes old (tokens last 15). */
const RENEW_WITHIN_SECONDS = 600

export interface Terminal {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
  env: NodeJS.ProcessEnv
  /** Aborted by Ctrl-C. */
  signal: AbortSignal
}

export interface Context extends Terminal {
  url: string
  credentials: Credentials
  /** The username of the kept session, when signed in with one. */
  username: string | undefined
  /** A client that sends the key or the kept token; refuses at once when there is neither. */
  signedIn(): BookCatalogue
  /** A client that sends nothing: for logging in. */
  anonymous(): BookCatalogue
}

/** The service: `--url`, else `BOOKS_URL`, else the one of the latest login, else the default. */
function serviceUrl(option: string | undefined, env: NodeJS.ProcessEnv, latest: string | undefined): string {
  const url = option ?? (env.BOOKS_URL || undefined) ?? latest ?? DEFAULT_URL
  return url.replace(/\/+$/, '')
}

export function contextOf(terminal: Terminal, option: string | undefined): Context {
  const { env } = terminal
  const saved = readSaved(env)
  const url = serviceUrl(option, env, saved.url)
  const key = env.BOOKS_KEY || undefined
  // A token is only ever sent to the service that issued it.
  const session = saved.sessions[url]
  const credentials: Credentials = { kind: key !== undefined ? 'key' : session !== undefined ? 'token' : 'none', url }
  return {
    // Passed on as getters: process.stdin and process.stderr each open their stream when first
    // read, milliseconds a command that never uses them need not spend.
    get stdin() {
      return terminal.stdin
    },
    get stdout() {
      return terminal.stdout
    },
    get stderr() {
      return terminal.stderr
    },
    env,
    signal: terminal.signal,
    url,
    credentials,
    username: key === undefined ? session?.username : undefined,
    signedIn() {
      if (credentials.kind === 'none') {
        throw new Refusal(`not signed in to ${url}: run book-catalogue login --username NAME, or set BOOKS_KEY`)
      }
      return new BookCatalogue({
        url,
        fetch: httpFetch,
        key,
        token: key === undefined ? session?.token : undefined,
        renewWithinSeconds: RENEW_WITHIN_SECONDS,
        onToken: (token) => {
          if (token !== undefined && session !== undefined) saveSession(env, url, { username: session.username, token })
        },
      })
    },
    anonymous: () => new BookCatalogue({ url, fetch: httpFetch }),
  }
}
