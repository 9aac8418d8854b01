import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import type { Accounts, User } from '../accounts/accounts.ts'
import type { StoredKey } from '../accounts/account.ts'
import { InvalidToken } from '../auth/errors.ts'
import { ROLES } from '../auth/principal.ts'
import type { TokenService } from '../auth/tokens.ts'
import { parseBodiesAsJson } from '../http/plugins/body-parser.ts'
import { envelope } from '../http/envelope.ts'
import { Refusal } from '../errors.ts'
import { component, Failure, failures, Success, TokenPayload } from '../schemas.ts'

export interface AccountRouteOptions {
  accounts: Accounts
  tokens: TokenService
}

/** How long after the password was given a token may still be renewed. */
const RENEWABLE_SECONDS = 12 * 60 * 60

const { invalidInput, tokenRefused, forbidden, tooLarge, internal, storeUnavailable } = failures
const errors = { 401: tokenRefused, 403: forbidden, 413: tooLarge, 500: internal, 503: storeUnavailable }
const security = [{ token: [] }]
const Role = Type.Union([Type.Literal('reader'), Type.Literal('editor'), Type.Literal('admin')], {
  description: `${ROLES.join(', ')}: each may do all the ones before it may`,
})
const Username = Type.String({
  pattern: '^[\\p{L}\\p{N}._@-]{1,64}$',
  description: '1 to 64 letters, digits, `.`, `_`, `@` or `-`; unique regardless of case',
})
const Password = Type.String({ minLength: 12, maxLength: 1024, description: '12 to 1024 characters, not trivially weak' })
const Time = Type.String({ format: 'date-time' })
const EXAMPLE_USER = { username: 'ada', role: 'editor', created: '2026-11-25T09:30:00.000Z' }
const UserSchema = component(
  'User',
  Type.Object(
    { username: Type.String(), role: Role, created: Type.Union([Time, Type.Null()], { description: 'null for the configured user' }) },
    { examples: [EXAMPLE_USER] },
  ),
)
const NewUser = component('NewUser', Type.Object({ username: Username, password: Password, role: Role }))
const UserChanges = component(
  'UserChanges',
  Type.Object(
    {
      role: Type.Optional(Role),
      password: Type.Optional(Password),
      current_password: Type.Optional(Type.String({ maxLength: 1024, description: 'Needed when users change their own password' })),
    },
    { description: 'The role, the password, or both' },
  ),
)
const UsernameParams = Type.Object({ username: Type.String({ maxLength: 1024 }) })
const EXAMPLE_KEY = {
  id: 7,
  name: 'nightly import',
  role: 'editor',
  owner: 'ada',
  created: '2026-11-25T09:30:00.000Z',
  expires: null,
  last_used: '2026-11-25T10:02:00.000Z',
}
const KeySchema = component(
  'Key',
  Type.Object(
    {
      id: Type.Integer(),
      name: Type.String(),
      role: Role,
      owner: Type.String(),
      created: Time,
      expires: Type.Union([Time, Type.Null()]),
      last_used: Type.Union([Time, Type.Null()], { description: 'Accurate to a minute' }),
    },
    { examples: [EXAMPLE_KEY] },
  ),
)
const NewKey = component(
  'NewKey',
  Type.Object({
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[^\\p{Cc}]*\\S[^\\p{Cc}]*$',
      description: '1 to 100 characters, not blank',
    }),
    role: Role,
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
  }),
)
const CreatedKey = component(
  'CreatedKey',
  Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    role: Role,
    key: Type.String({ description: 'Shown this once: send it in `Authorization` as a token' }),
    created: Time,
    expires: Type.Union([Time, Type.Null()]),
  }),
)
const KeyIdParams = Type.Object({ id: Type.String({ maxLength: 1024 }) })
const userExists = Failure('UserExists', 409, 'A user of that name exists, whatever its case', 'User already exists')
const userNotFound = Failure('UserNotFound', 404, 'No user has that name', 'User not found')
const keyNotFound = Failure('KeyNotFound', 404, "No such key, or another user's", 'Key not found')
const refusedOrWrongPassword = Failure(
  'TokenRefusedOrWrongPassword',
  401,
  'The token is missing or refused, or `current_password` is wrong',
  'Authorization token required',
  'Invalid token',
  'Invalid credentials',
)

const at = (ms: number) => new Date(ms).toISOString()
const iso = (ms: number | null) => (ms === null ? null : at(ms))
const userOf = ({ username, role, created }: User) => ({ username, role, created: iso(created) })
const keyOf = ({ id, name, role, owner, created, expires, lastUsed }: StoredKey) => ({
  id,
  name,
  role,
  owner,
  created: at(created),
  expires: iso(expires),
  last_used: iso(lastUsed),
})

/** Users, keys and the renewal of tokens (docs/api.md#accounts). */
export async function accountRoutes(app: FastifyInstance, { accounts, tokens }: AccountRouteOptions) {
  parseBodiesAsJson(app)
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()

  routes.post(
    '/token/refresh',
    {
      schema: {
        summary: 'Renew a token',
        description:
          'A fresh token for the same user and role, until 12 hours after the password was given; keys are never renewed. Send the token to renew in `Authorization`.',
        operationId: 'refreshToken',
        tags: ['Tokens'],
        security,
        response: {
          200: Success(
            200,
            'Token generated successfully',
            TokenPayload,
            { token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' },
            'A token valid for 15 minutes',
          ),
          ...errors,
        },
      },
      config: { access: 'reader' },
    },
    async (request, reply) => {
      const { session, username, role } = request.principal
      if (session === undefined || Date.now() / 1000 > session.authTime + RENEWABLE_SECONDS) throw new InvalidToken()
      let token: string
      try {
        token = tokens.sign(username, role, session)
      } catch (err) {
        request.log.error({ err }, 'token signing failed')
        throw new Refusal(500, 'Could not generate token')
      }
      reply.header('cache-control', 'no-store')
      return envelope(200, 'Token generated successfully', { token })
    },
  )

  routes.post(
    '/users',
    {
      schema: {
        summary: 'Add a user',
        operationId: 'createUser',
        tags: ['Users'],
        security,
        body: NewUser,
        response: {
          201: Success(201, 'User created successfully', UserSchema, EXAMPLE_USER, 'The new user'),
          400: invalidInput,
          409: userExists,
          ...errors,
        },
      },
      config: { access: 'admin', invalidInputMessage: 'Invalid input' },
    },
    async (request, reply) => {
      const user = await accounts.createUser(request.body)
      reply.code(201)
      return envelope(201, 'User created successfully', userOf(user))
    },
  )

  routes.get(
    '/users',
    {
      schema: {
        summary: 'The users',
        description: 'The configured user first, then every other by name.',
        operationId: 'listUsers',
        tags: ['Users'],
        security,
        response: { 200: Success(200, 'Users retrieved successfully', Type.Array(UserSchema), [EXAMPLE_USER], 'Every user'), ...errors },
      },
      config: { access: 'admin' },
    },
    async () => envelope(200, 'Users retrieved successfully', (await accounts.users()).map(userOf)),
  )

  routes.get(
    '/user/:username',
    {
      schema: {
        summary: 'A user',
        operationId: 'getUser',
        tags: ['Users'],
        security,
        params: UsernameParams,
        response: { 200: Success(200, 'User retrieved successfully', UserSchema, EXAMPLE_USER, 'The user'), 404: userNotFound, ...errors },
      },
      config: { access: 'admin' },
    },
    async (request) => envelope(200, 'User retrieved successfully', userOf(await accounts.user(request.params.username))),
  )

  routes.put(
    '/user/:username',
    {
      schema: {
        summary: "Change a user's role or password",
        description: 'An admin changes anyone but the configured user; everyone else only their own password, sending `current_password`.',
        operationId: 'updateUser',
        tags: ['Users'],
        security,
        params: UsernameParams,
        body: UserChanges,
        response: {
          200: Success(200, 'User updated successfully', UserSchema, EXAMPLE_USER, 'The user as it now is'),
          400: invalidInput,
          404: userNotFound,
          ...errors,
          401: refusedOrWrongPassword,
        },
      },
      config: { access: 'reader', invalidInputMessage: 'Invalid input' },
    },
    async (request) => {
      const { role, password, current_password } = request.body
      const user = await accounts.updateUser(request.principal, request.params.username, {
        role,
        password,
        currentPassword: current_password,
      })
      return envelope(200, 'User updated successfully', userOf(user))
    },
  )

  routes.delete(
    '/user/:username',
    {
      schema: {
        summary: 'Remove a user',
        description: 'Their keys are revoked with them, and their tokens refused from then on.',
        operationId: 'deleteUser',
        tags: ['Users'],
        security,
        params: UsernameParams,
        response: { 200: Success(200, 'User deleted successfully', Type.Null(), null, 'The user is gone'), 404: userNotFound, ...errors },
      },
      config: { access: 'admin' },
    },
    async (request) => {
      await accounts.deleteUser(request.params.username)
      return envelope(200, 'User deleted successfully', null)
    },
  )

  routes.post(
    '/keys',
    {
      schema: {
        summary: 'Create a key for a program',
        description: "In the caller's role or a lower one. The key is in this answer only: the service keeps its hash.",
        operationId: 'createKey',
        tags: ['Keys'],
        security,
        body: NewKey,
        response: {
          201: Success(
            201,
            'Key created successfully',
            CreatedKey,
            { id: 7, name: 'nightly import', role: 'editor', key: 'bk_…', created: '2026-11-25T09:30:00.000Z', expires: null },
            'The key, shown this once',
          ),
          400: invalidInput,
          ...errors,
        },
      },
      config: { access: 'reader', invalidInputMessage: 'Invalid input' },
    },
    async (request, reply) => {
      const { name, role, expires_in_days } = request.body
      const { id, key, created, expires } = await accounts.createKey(request.principal, { name, role, expiresInDays: expires_in_days })
      reply.code(201)
      return envelope(201, 'Key created successfully', { id, name, role, key, created: at(created), expires: iso(expires) })
    },
  )

  routes.get(
    '/keys',
    {
      schema: {
        summary: 'The keys',
        description: "The caller's keys; an admin's answer holds everyone's. Never the keys themselves.",
        operationId: 'listKeys',
        tags: ['Keys'],
        security,
        response: { 200: Success(200, 'Keys retrieved successfully', Type.Array(KeySchema), [EXAMPLE_KEY], 'The keys'), ...errors },
      },
      config: { access: 'reader' },
    },
    async (request) => envelope(200, 'Keys retrieved successfully', (await accounts.keys(request.principal)).map(keyOf)),
  )

  routes.delete(
    '/key/:id',
    {
      schema: {
        summary: 'Revoke a key',
        description: 'Refused from then on, on every instance within a second.',
        operationId: 'revokeKey',
        tags: ['Keys'],
        security,
        params: KeyIdParams,
        response: { 200: Success(200, 'Key revoked successfully', Type.Null(), null, 'The key is revoked'), 404: keyNotFound, ...errors },
      },
      config: { access: 'reader' },
    },
    async (request) => {
      const id = /^[1-9][0-9]{0,15}$/.test(request.params.id) ? Number(request.params.id) : 0
      await accounts.revokeKey(request.principal, id)
      return envelope(200, 'Key revoked successfully', null)
    },
  )
}
