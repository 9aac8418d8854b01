/** `users` and `keys`: the accounts of the catalogue (docs/api.md#accounts). */
import type { Role, UserChanges } from '../../index.ts'
import { KEY_COLUMNS, USER_COLUMNS } from '../columns.ts'
import type { Context } from '../context.ts'
import { Refusal, UsageError } from '../exit.ts'
import { inOneBatch, printList, printOne, write } from '../output.ts'
import { askSecret } from '../prompt.ts'
import { formatOf, type Shown } from './books.ts'

/** A new password, typed twice on a terminal; stdin's next line otherwise. */
async function newPassword(context: Context, username: string): Promise<string> {
  const password = await askSecret(context, `New password for ${username}: `)
  if (context.stdin.isTTY && (await askSecret(context, 'The same again: ')) !== password) throw new Refusal('the two passwords differ')
  return password
}

export async function listUsers(context: Context, options: Shown): Promise<void> {
  await printList(context.stdout, formatOf(options), USER_COLUMNS, inOneBatch(await context.signedIn().users.list()))
}

export async function showUser(context: Context, username: string, options: Shown): Promise<void> {
  await printOne(context.stdout, formatOf(options), USER_COLUMNS, await context.signedIn().users.get(username))
}

export async function addUser(context: Context, username: string, options: Shown & { role: Role }): Promise<void> {
  const users = context.signedIn().users
  const password = await newPassword(context, username)
  await printOne(context.stdout, formatOf(options), USER_COLUMNS, await users.create({ username, password, role: options.role }))
}

export async function setUser(context: Context, username: string, options: Shown & { role?: Role; password?: boolean }): Promise<void> {
  if (options.role === undefined && !options.password) throw new UsageError('nothing to change: give --role or --password')
  const users = context.signedIn().users
  const changes: UserChanges = {}
  if (options.role !== undefined) changes.role = options.role
  if (options.password) {
    // Users changing their own password, admins included, prove they know the current one.
    if (context.username?.toLowerCase() === username.toLowerCase())
      changes.current_password = await askSecret(context, 'Current password: ')
    changes.password = await newPassword(context, username)
  }
  await printOne(context.stdout, formatOf(options), USER_COLUMNS, await users.update(username, changes))
}

export async function removeUser(context: Context, username: string): Promise<void> {
  await context.signedIn().users.delete(username)
  context.stderr.write(`Deleted user ${username}, and revoked their keys\n`)
}

export async function listKeys(context: Context, options: Shown): Promise<void> {
  await printList(context.stdout, formatOf(options), KEY_COLUMNS, inOneBatch(await context.signedIn().keys.list()))
}

export async function addKey(context: Context, name: string, options: Shown & { role: Role; expiresInDays?: number }): Promise<void> {
  const created = await context.signedIn().keys.create({ name, role: options.role, expires_in_days: options.expiresInDays })
  if (options.json) return write(context.stdout, `${JSON.stringify(created, null, 2)}\n`)
  // The key alone on stdout, for KEY=$(book-catalogue keys add …); what it is on stderr.
  await write(context.stdout, `${created.key}\n`)
  const expires = created.expires === null ? 'never expires' : `expires ${created.expires}`
  context.stderr.write(
    `Key ${created.id} "${created.name}" (${created.role}) ${expires}. It is shown this once: keep it now, and send it as BOOKS_KEY\n`,
  )
}

export async function revokeKey(context: Context, id: number): Promise<void> {
  await context.signedIn().keys.revoke(id)
  context.stderr.write(`Revoked key ${id}\n`)
}
