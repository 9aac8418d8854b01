/** Per page of the history, the trash and the changes when `limit` is not given. */
export const DEFAULT_LIMIT = 100

/** How many a page holds: the query's `limit`, which the route's schema has checked, or the default. */
export function pageLimit(query: { limit?: string | undefined }): number {
  return Number(query.limit ?? DEFAULT_LIMIT)
}

/** The `Link` header to the page after one: `path` with its `limit`, and the parameter that says where it starts. */
export function nextPageLink(path: string, limit: number, [name, value]: [string, number]): string {
  return `<${path}?limit=${limit}&${name}=${value}>; rel="next"`
}
