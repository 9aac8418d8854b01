import { SerializerSelector, type Serializer, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'

/**
 * Answer serializers built on their first use, as the validators are (validation.ts). Building
 * every route's serializers from its answer schemas took about a third of the time Fastify spends
 * building the app, at every start; now a start builds none, and each answer's serializer costs a
 * few milliseconds once, on the first answer that needs it.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const build = SerializerSelector()(externalSchemas, options)
  return (route) => {
    let serialize: Serializer | undefined
    return (doc: unknown) => (serialize ??= build(route))(doc)
  }
}
