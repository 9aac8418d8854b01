import { SerializerSelector, type Serializer, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'

/**
 * Serializers built in this process, by set of external schemas and options, then by answer
 * schema: an app built again in the same process (as the tests build hundreds) builds none of
 * them again. Fastify hands each app copies of the schemas, so they are told apart by content.
 */
const built = new Map<string, Serializer>()

/**
 * Answer serializers built on their first use, as the validators are (validation.ts). Building
 * every route's serializers from its answer schemas took about a third of the time Fastify spends
 * building the app, at every start; now a start builds none, and each answer's serializer costs a
 * few milliseconds once, on the first answer that needs it.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const build = SerializerSelector()(externalSchemas, options)
  const pool = JSON.stringify([externalSchemas, options])
  const serializerFor: typeof build = (route) => {
    const key = pool + JSON.stringify(route.schema)
    let serialize = built.get(key)
    if (serialize === undefined) built.set(key, (serialize = build(route)))
    return serialize
  }
  return (route) => {
    let serialize: Serializer | undefined
    return (doc: unknown) => (serialize ??= serializerFor(route))(doc)
  }
}
