import AjvCompiler, { type RouteDefinition, type ValidatorFactory } from '@fastify/ajv-compiler'

// What a compiler from the pool is called with at run time: the route's schema for one part
// (the package's own types describe Ajv's compile instead).
type CompileForRoute = (route: RouteDefinition) => unknown
type ExternalSchemas = Parameters<ReturnType<typeof AjvCompiler>>[0]

/**
 * Validators per request part: bodies are checked as sent ("2020" is not a year), while the
 * query string, path parameters and headers, which arrive as text, may be coerced to the types
 * their schemas name, so that a number in the query reaches the handler as a number. Both keep
 * Fastify's other Ajv defaults.
 */
function buildValidator(externalSchemas: ExternalSchemas): CompileForRoute {
  // A factory each: a factory keeps one Ajv instance per set of external schemas, whatever the options.
  const strict = AjvCompiler()(externalSchemas, { customOptions: { coerceTypes: false } }) as unknown as CompileForRoute
  const coercing = AjvCompiler()(externalSchemas, { customOptions: { coerceTypes: 'array' } }) as unknown as CompileForRoute
  return (route) => (route.httpPart === 'body' ? strict(route) : coercing(route))
}

/** Fastify's `schemaController` option that installs these validators. */
export const partValidators = { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory } }
