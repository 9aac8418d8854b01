import AjvCompiler, { type RouteDefinition, type ValidatorFactory } from '@fastify/ajv-compiler'
import { COMPONENT } from '../../schemas.ts'

// What a compiler from the pool is called with at run time: the route's schema for one part
// (the package's own types describe Ajv's compile instead).
type CompileForRoute = (route: RouteDefinition) => Validate
type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown }
type ExternalSchemas = Parameters<ReturnType<typeof AjvCompiler>>[0]

// A pool each: a pool keeps one Ajv instance per set of external schemas, whatever the options.
// They and the validators compiled live as long as the process: an app built again in it (as the
// tests build hundreds) compiles none of them again. Fastify hands each app copies of the
// schemas, so they are told apart by content, and Ajv, which remembers every schema object it
// compiled, sees each only once.
const strictPool = AjvCompiler()
const coercingPool = AjvCompiler()
const compiled = new Map<string, Validate>()

/**
 * Validators per request part: bodies are checked as sent ("2020" is not a year), while the
 * query string, path parameters and headers, which arrive as text, may be coerced to the types
 * their schemas name, so that a number in the query reaches the handler as a number. Both keep
 * Fastify's other Ajv defaults.
 */
function buildValidator(externalSchemas: ExternalSchemas): CompileForRoute {
  // The keyword that names a schema in the OpenAPI document is for the document alone.
  const keywords = [COMPONENT]
  const strict = strictPool(externalSchemas, { customOptions: { coerceTypes: false, keywords } }) as unknown as CompileForRoute
  const coercing = coercingPool(externalSchemas, { customOptions: { coerceTypes: 'array', keywords } }) as unknown as CompileForRoute
  const pool = JSON.stringify(externalSchemas)
  return (route) =>
    lazily(() => {
      const body = String(route.httpPart) === 'body'
      const key = `${body ? 'strict' : 'coercing'}${pool}${JSON.stringify(route.schema)}`
      let validate = compiled.get(key)
      if (validate === undefined) compiled.set(key, (validate = body ? strict(route) : coercing(route)))
      return validate
    })
}

/**
 * A validator compiled on its first call. Compiling every route's schemas took a quarter of a
 * second of each start; now a start compiles none, and each route pays a few milliseconds once.
 * Fastify passes the parent of the data to validators that have `schemaEnv`, as Ajv's all have,
 * so that coercion can replace a whole part; it reads the errors of a failed call from `errors`.
 */
function lazily(compile: () => Validate): Validate {
  let validate: Validate | undefined
  const lazy: Validate = (data, context) => (validate ??= compile())(data, context)
  return Object.defineProperties(lazy, { schemaEnv: { value: true }, errors: { get: () => validate?.errors } })
}

/** Fastify's `schemaController` option that installs these validators. */
export const partValidators = { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory } }
