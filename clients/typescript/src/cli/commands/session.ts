/** `login` and `logout`: a token kept for a service, or forgotten. */
import { sessionFile, saveSession } from '../config.ts'
import type { Context } from '../context.ts'
import { Refusal } from '../exit.ts'
import { askSecret } from '../prompt.ts'

function roleOf(token: string): string | undefined {
  try {
    return (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { role?: string }).role
  } catch {
    return undefined
  }
}

export async function login(context: Context, { username }: { username: string }): Promise<void> {
  const { env, stderr, url } = context
  const password = env.BOOKS_PASSWORD || (await askSecret(context, `Password for ${username} at ${url}: `))
  if (password === '') throw new Refusal('no password given')
  const token = await context.anonymous().login(username, password)
  saveSession(env, url, { username, token })
  const role = roleOf(token)
  stderr.write(`Signed in to ${url} as ${username}${role === undefined ? '' : ` (${role})`}; the token is kept in ${sessionFile(env)}\n`)
  if (env.BOOKS_KEY) stderr.write('BOOKS_KEY is set: commands send the key, not this token, until it is unset\n')
}

export async function logout(context: Context): Promise<void> {
  saveSession(context.env, context.url, undefined)
  context.stderr.write(`Signed out of ${context.url}\n`)
}
