import { bookPaths, WARM_UP_SECONDS, type Step, type StepContext } from './measure.ts'
import { allIds, CREDENTIALS, sampleBook } from './service.ts'
import { wrk, type Workload } from './wrk.ts'
import { generateBooks } from './catalogue.ts'

/** Distinct books a step sends, cycled through: more than the fastest insert so far made in a run. */
const DISTINCT_BOOKS = 100_000

const bookBody = JSON.stringify(sampleBook(7))

const auth = (context: StepContext) => ({ authorization: context.token })
const create = (context: StepContext): Workload => ({ method: 'POST', path: '/book', headers: auth(context), body: bookBody })

export const login: Step = {
  name: 'POST /token',
  workload: async () => ({ method: 'POST', path: '/token', body: JSON.stringify(CREDENTIALS) }),
}

export const read: Step = {
  name: 'GET /book/{id}',
  workload: async (context) => ({ method: 'GET', path: `/book/${context.ids[0]}`, headers: auth(context), paths: bookPaths(context.ids) }),
}

export const list: Step = {
  name: 'GET /books (100 books)',
  workload: async (context) => ({ method: 'GET', path: '/books', headers: auth(context) }),
}

export const update: Step = {
  name: 'PUT /book/{id}',
  workload: async (context) => ({
    method: 'PUT',
    path: `/book/${context.ids[0]}`,
    headers: auth(context),
    body: bookBody,
    paths: bookPaths(context.ids),
  }),
}

export const insert: Step = { name: 'POST /book', workload: async (context) => create(context) }

/**
 * Books unlike each other, as people add them: each lands at its own place in every index by
 * title, author and year, where the books of `insert`, all alike, land side by side.
 */
export const insertDistinct: Step = {
  name: 'POST /book, books unlike',
  workload: async (context) => ({ method: 'POST', path: '/book', headers: auth(context), bodies: distinctBodies() }),
}

/** The books as JSON in ASCII, which is all that wrk's scripts carry. */
function distinctBodies(): string[] {
  const ascii = (json: string) => json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return Array.from(generateBooks(DISTINCT_BOOKS), (book) => ascii(JSON.stringify(book)))
}

/** Each request deletes a book that exists: the books are made first, twice what the fastest write so far could delete. */
export const remove: Step = {
  name: 'DELETE /book/{id}',
  workload: async (context) => {
    const { service, token, done, load } = context
    const writes = done.filter((m) => [update.name, insert.name, insertDistinct.name].includes(m.name))
    const writesPerSecond = Math.max(1000, ...writes.map((m) => m.requestsPerSecond.max))
    const needed = Math.ceil(writesPerSecond * (WARM_UP_SECONDS + load.durationSeconds * load.runs) * 2)
    let present = await allIds(service, token)
    while (present.length < needed) {
      const seconds = Math.ceil((needed - present.length) / writesPerSecond) + 1
      await wrk(service.baseUrl, service.pid, create(context), load, seconds)
      present = await allIds(service, token)
    }
    return { method: 'DELETE', path: `/book/${present[0]}`, headers: auth(context), paths: bookPaths(present), once: true }
  },
}

/** Every operation of the interface, in an order that leaves each one the data it needs. */
export const everyOperation: Step[] = [login, read, list, update, insert, insertDistinct, remove]
