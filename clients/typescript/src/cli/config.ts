/**
 * The sessions the command keeps between runs: a token per service, in the user's config folder
 * ($XDG_CONFIG_HOME, or ~/.config, then book-catalogue/session.json), readable by the user alone.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export interface Saved {
  /** The service of the latest login: the one commands use when told no other. */
  url: string | undefined
  sessions: Record<string, { username: string; token: string }>
}

export function configFolder(env: NodeJS.ProcessEnv): string {
  const base =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config')
  return join(base, 'book-catalogue')
}

export function sessionFile(env: NodeJS.ProcessEnv): string {
  return join(configFolder(env), 'session.json')
}

export function readSaved(env: NodeJS.ProcessEnv): Saved {
  try {
    const saved = JSON.parse(readFileSync(sessionFile(env), 'utf8')) as Partial<Saved>
    return { url: saved.url, sessions: saved.sessions ?? {} }
  } catch {
    // No file yet, or one that cannot be read: no session, as before the first login.
    return { url: undefined, sessions: {} }
  }
}

/** Writes the sessions whole, to a new file renamed over the old one: a reader never sees half of it, and its mode is 0600 from the start. */
export function writeSaved(env: NodeJS.ProcessEnv, saved: Saved): void {
  const folder = configFolder(env)
  mkdirSync(folder, { recursive: true, mode: 0o700 })
  const file = sessionFile(env)
  const temporary = `${file}.${process.pid}`
  writeFileSync(temporary, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 })
  renameSync(temporary, file)
}

/** Keeps (or, with `undefined`, forgets) the session with `url`, which becomes the service commands use by default. */
export function saveSession(env: NodeJS.ProcessEnv, url: string, session: Saved['sessions'][string] | undefined): void {
  const saved = readSaved(env)
  if (session === undefined) delete saved.sessions[url]
  else saved.sessions[url] = session
  writeSaved(env, { url: session === undefined && saved.url === url ? undefined : url, sessions: saved.sessions })
}
