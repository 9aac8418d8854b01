import { COMPONENT } from '../../schemas.ts'

type Json = unknown

/**
 * The document with every schema named by COMPONENT moved to `components.schemas` under its name,
 * and referred to from where it was. The routes validate with the schemas inline, as Fastify
 * compiles them; the document names them, so that a client generated from it has a `Book` type
 * and a type for each error answer. Two different schemas given one name are a mistake: it throws.
 */
export function withNamedComponents<T extends object>(document: T): T {
  const named = new Map<string, { schema: Json; text: string }>()
  const visit = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(visit)
    if (typeof value !== 'object' || value === null) return value
    const entries = Object.entries(value as Record<string, Json>).map(([key, inner]) => [key, visit(inner)] as const)
    const name = (value as Record<string, Json>)[COMPONENT]
    if (typeof name !== 'string') return Object.fromEntries(entries)
    const schema = Object.fromEntries(entries.filter(([key]) => key !== COMPONENT))
    // The document moves a request body's examples out of its schema: the same schema otherwise.
    const { examples, ...rest } = schema
    const text = JSON.stringify(rest)
    const known = named.get(name)
    if (known !== undefined && known.text !== text) throw new Error(`Two different schemas are both named ${name}`)
    if (known === undefined || examples !== undefined) named.set(name, { schema, text })
    return { $ref: `#/components/schemas/${name}` }
  }
  const result = visit(document) as T & { components?: { schemas?: Record<string, Json> } }
  const components = result.components ?? {}
  const schemas = { ...components.schemas }
  for (const [name, { schema }] of [...named].sort(([a], [b]) => a.localeCompare(b))) schemas[name] = schema
  return { ...result, components: { ...components, schemas } }
}
