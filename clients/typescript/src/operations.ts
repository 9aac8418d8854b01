/**
 * Requests named by the routes and methods of openapi.json, so that the types of their bodies
 * and answers are the generated ones, and a route the service no longer has does not compile.
 */
import type { FetchHeaders } from './fetch.ts'
import type { paths } from './generated/openapi.ts'
import type { Transport, Request } from './transport.ts'
import type { Data, JsonBody, Method, Operation, Route } from './types.ts'

/** The routes that answer `method`. */
export type RouteWith<M extends Method> = { [R in Route]: [NonNullable<paths[R][M]>] extends [never] ? never : R }[Route]

type ParamNames<R extends string> = R extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never

export type Call<R extends Route, M extends Method> = Omit<Request, 'method' | 'path' | 'json'> & {
  params?: Record<ParamNames<R>, string | number>
  json?: JsonBody<Operation<R, M>>
}

/** `route` with its `{name}` parts filled from `params`. */
export function pathOf(route: string, params: Record<string, string | number> = {}): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])))
}

/** Sends a request to a route of the service and answers the `data` of its envelope, typed, with the headers. */
export function call<M extends Method, R extends RouteWith<M>>(
  transport: Transport,
  method: M,
  route: R,
  { params, ...request }: Call<R, M> = {},
): Promise<{ data: Data<Operation<R, M>>; headers: FetchHeaders }> {
  return transport.json({ ...request, method: method.toUpperCase() as Request['method'], path: pathOf(route, params) })
}
