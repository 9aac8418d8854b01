import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { faker } from '@faker-js/faker'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Store } from '../../src/store/store.ts'
import type { Book, NewBook } from '../../src/books/book.ts'
import { buildTestApp, issueToken, searchEngines, withToken } from '../helpers.ts'
import { compareFolded, compareTitles, expectedIds, type ModelQuery } from '../support/book-search-model.ts'

interface ListBody {
  status: number
  message: string
  data: Book[] | null
}

const HAND_PICKED: NewBook[] = [
  { title: "Harry Potter and the Sorcerer's Stone", author: 'J.K. Rowling, Mary GrandPré', year: 1997 },
  { title: 'Harry Potter and the Chamber of Secrets', author: 'J.K. Rowling', year: 1998 },
  { title: 'The Hunger Games (The Hunger Games, #1)', author: 'Suzanne Collins', year: 2008 },
  { title: 'Catching Fire (The Hunger Games, #2)', author: 'Suzanne Collins', year: 2009 },
  { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 },
  { title: 'Garcia and the Sea', author: 'Anonymous', year: 2001 },
  { title: 'The Shining', author: 'Stephen King', year: 1977 },
  { title: 'The Poisonwood Bible', author: 'Barbara Kingsolver', year: 1998 },
  { title: 'King Lear', author: 'William Shakespeare', year: 1606 },
  { title: 'At Swim-Two-Birds', author: "Flann O'Brien", year: 1939 },
  { title: 'Nineteen Eighty-Four', author: 'George Orwell', year: 1949 },
  { title: '1984', author: 'George Orwell', year: 1949 },
  { title: 'Fahrenheit 451', author: 'Ray Bradbury', year: 1953 },
  { title: 'A Game of Thrones (A Song of Ice and Fire, #1)', author: 'George R.R. Martin', year: 1996 },
  { title: 'Dune', author: 'Frank Herbert', year: 1965 },
  { title: 'Dune Messiah', author: 'Frank Herbert', year: 1969 },
  { title: 'Children of Dune', author: 'Frank Herbert', year: 1976 },
  { title: 'Solaris', author: 'Stanisław Lem', year: 1961 },
  { title: 'éclair recipes', author: 'Zoë Ångström', year: -44 },
  { title: 'Eclair Recipes', author: 'zoe angstrom', year: 0 },
  { title: 'Ordinary 100% _Wild_ [Cards]*', author: 'Back\\Slash "Quoted" NEAR OR AND NOT', year: 2020 },
]

for (const engine of searchEngines) {
  describe(`finding books on ${engine.name}`, { skip: engine.skip }, () => {
    let app: FastifyInstance
    let store: Store
    let token: string
    const books: Book[] = []

    before(async () => {
      store = await engine.open()
      app = await buildTestApp({}, { store })
      token = await issueToken(app)
      for (const book of HAND_PICKED) books.push(await create(book))
    })
    after(() => app.close())

    async function create(book: NewBook): Promise<Book> {
      const res = await app.inject(withToken(token, { method: 'POST', url: '/book', payload: book }))
      assert.equal(res.statusCode, 201, res.body)
      return res.json().data
    }

    const get = (url: string) => app.inject(withToken(token, { method: 'GET', url }))

    type Params = Record<string, string | number | undefined>

    function query(params: Params): string {
      const search = new URLSearchParams()
      for (const [name, value] of Object.entries(params)) if (value !== undefined) search.append(name, String(value))
      return `/books?${search.toString()}`
    }

    async function ids(params: Params): Promise<number[]> {
      const res = await get(query(params))
      assert.equal(res.statusCode, 200, res.body)
      return res.json<ListBody>().data!.map((book) => book.id)
    }

    const idOf = (title: string) => books.find((book) => book.title === title)!.id
    const titles = async (params: Params) => (await ids(params)).map((id) => books.find((book) => book.id === id)!.title)

    /** Every page, following `rel="next"` as it is. */
    async function walk(url: string, between: (seen: Book[]) => Promise<void> = async () => {}) {
      const seen: Book[] = []
      const links: string[] = []
      let next: string | undefined = url
      while (next !== undefined) {
        const res: LightMyRequestResponse = await get(next)
        assert.equal(res.statusCode, 200, res.body)
        seen.push(...res.json<ListBody>().data!)
        const link = res.headers.link as string | undefined
        if (link !== undefined) links.push(link)
        next = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1]
        await between(seen)
      }
      return { seen, links }
    }

    describe('q', () => {
      test('finds books whose title or author has words beginning with every word', async () => {
        // Both titles hold the words as a phrase, as early: the shorter title first.
        assert.deepEqual(await titles({ q: 'harr pott' }), [
          'Harry Potter and the Chamber of Secrets',
          "Harry Potter and the Sorcerer's Stone",
        ])
        assert.deepEqual(await titles({ q: 'HARRY secr' }), ['Harry Potter and the Chamber of Secrets'])
        assert.deepEqual(await titles({ q: 'herb messiah' }), ['Dune Messiah'])
        assert.deepEqual(await titles({ q: 'arry' }), [])
      })

      test('ignores case and accents both ways', async () => {
        const garcia = ['Garcia and the Sea', 'Cien años de soledad']
        assert.deepEqual(await titles({ q: 'garcia' }), garcia)
        assert.deepEqual(await titles({ q: 'García' }), garcia)
        assert.deepEqual(await titles({ q: 'GARCÍA' }), garcia)
        assert.deepEqual(await titles({ q: 'anos soled' }), ['Cien años de soledad'])
        assert.deepEqual(await titles({ q: 'stanislaw' }), ['Solaris'])
        assert.deepEqual(await titles({ q: 'ångström' }), ['éclair recipes', 'Eclair Recipes'])
      })

      test('ranks title hits above author-only hits', async () => {
        assert.deepEqual(await titles({ q: 'king' }), ['King Lear', 'The Shining', 'The Poisonwood Bible'])
        assert.deepEqual(await titles({ q: 'dune' }), ['Dune', 'Dune Messiah', 'Children of Dune'])
      })

      test('ranks closer and fuller matches first', async () => {
        assert.deepEqual(await titles({ q: 'hunger games' }), [
          'The Hunger Games (The Hunger Games, #1)',
          'Catching Fire (The Hunger Games, #2)',
        ])
        // Out of order, neither title holds the phrase: the shorter title first.
        assert.deepEqual(await titles({ q: 'games hunger' }), [
          'Catching Fire (The Hunger Games, #2)',
          'The Hunger Games (The Hunger Games, #1)',
        ])
        // Whole words before beginnings of words.
        assert.deepEqual(await titles({ q: 'sol' }), ['Solaris', 'Cien años de soledad'])
        assert.deepEqual((await titles({ q: 'the' }))[0], 'The Shining')
      })

      test('finds series names in parentheses and their numbers', async () => {
        assert.deepEqual(await titles({ q: 'hunger 2' }), ['Catching Fire (The Hunger Games, #2)'])
        assert.deepEqual(await titles({ q: '#1 (hunger' }), ['The Hunger Games (The Hunger Games, #1)'])
        assert.deepEqual(await titles({ q: 'song ice fire' }), ['A Game of Thrones (A Song of Ice and Fire, #1)'])
      })

      test('reads apostrophes, dots and hyphens inside words either way', async () => {
        const stone = ["Harry Potter and the Sorcerer's Stone"]
        for (const q of ["sorcerer's", 'sorcerer’s', 'sorcerers', 'sorcerer']) assert.deepEqual(await titles({ q }), stone, q)
        for (const q of ["o'brien", 'obrien', 'brien', 'flann o']) assert.deepEqual(await titles({ q }), ['At Swim-Two-Birds'], q)
        for (const q of ['swim-two', 'swimtwo', 'two birds']) assert.deepEqual(await titles({ q }), ['At Swim-Two-Birds'], q)
        for (const q of ['eighty-four', 'eightyfour', 'eighty four']) assert.deepEqual(await titles({ q }), ['Nineteen Eighty-Four'], q)
      })

      test('finds every name of an author list', async () => {
        const stone = "Harry Potter and the Sorcerer's Stone"
        assert.deepEqual(await titles({ q: 'grandpre' }), [stone])
        assert.deepEqual(await titles({ q: 'GrandPré rowling' }), [stone])
        assert.deepEqual(await titles({ q: 'mary j.k.' }), [stone])
        assert.deepEqual(await titles({ q: 'jk row' }), ['Harry Potter and the Chamber of Secrets', stone])
        assert.deepEqual(await titles({ q: 'r.r. martin' }), ['A Game of Thrones (A Song of Ice and Fire, #1)'])
      })

      test('one-letter words are beginnings like any other', async () => {
        assert.deepEqual(await titles({ q: 'a g o t' }), ['A Game of Thrones (A Song of Ice and Fire, #1)'])
        assert.deepEqual(await titles({ q: 'd m' }), ['Dune Messiah', 'Cien años de soledad'])
      })

      test('numbers in titles are words', async () => {
        assert.deepEqual(await titles({ q: '1984' }), ['1984'])
        assert.deepEqual(await titles({ q: '19' }), ['1984'])
        assert.deepEqual(await titles({ q: '451' }), ['Fahrenheit 451'])
        // Found by the author only, both: the shorter title first.
        assert.deepEqual(await titles({ q: 'orwell' }), ['1984', 'Nineteen Eighty-Four'])
      })

      test('operators and punctuation are plain text', async () => {
        const wild = ['Ordinary 100% _Wild_ [Cards]*']
        assert.deepEqual(await titles({ q: 'near or and not' }), wild)
        assert.deepEqual(await titles({ q: '"quoted" back\\slash' }), wild)
        assert.deepEqual(await titles({ q: 'wild* -cards' }), wild)
        assert.deepEqual(await titles({ q: 'NOT dune' }), [])
        assert.deepEqual(await titles({ q: 'dune OR shining' }), [])
      })

      test('with no letters or digits, every book matches, in id order', async () => {
        assert.deepEqual(await ids({ q: '%_*' }), (await ids({ sort: 'id' })).slice())
      })
    })

    describe('title and author', () => {
      test('find text contained anywhere, case and accents ignored', async () => {
        assert.deepEqual(await titles({ author: 'king' }), ['The Shining', 'The Poisonwood Bible'])
        assert.deepEqual(await titles({ author: 'KING' }), ['The Shining', 'The Poisonwood Bible'])
        assert.deepEqual(await titles({ title: 'oisonw' }), ['The Poisonwood Bible'])
        assert.deepEqual(await titles({ author: 'garcía márq' }), ['Cien años de soledad'])
        assert.deepEqual(await titles({ author: 'ANGSTROM' }), ['éclair recipes', 'Eclair Recipes'])
        assert.deepEqual(await titles({ title: 'e', author: 'herb' }), ['Dune', 'Dune Messiah', 'Children of Dune'])
        assert.deepEqual(await titles({ title: 'du' }), ['Dune', 'Dune Messiah', 'Children of Dune'])
      })

      test('take wildcards and punctuation as plain text', async () => {
        const wild = ['Ordinary 100% _Wild_ [Cards]*']
        for (const title of ['100%', '%', '_wild_', '_', '[cards]*', '*', '[', ']', '0% _'])
          assert.deepEqual(await titles({ title }), wild, title)
        for (const author of ['k\\s', '\\', '"quoted"', 'near or']) assert.deepEqual(await titles({ author }), wild, author)
        assert.deepEqual(await titles({ title: "sorcerer's" }), ["Harry Potter and the Sorcerer's Stone"])
        assert.deepEqual(await titles({ title: 'o%s' }), [])
        assert.deepEqual(await titles({ title: 'a\u0000b' }), [])
      })
    })

    test('year, year_from and year_to bound the years, inclusively', async () => {
      assert.deepEqual(await titles({ year: 1949 }), ['Nineteen Eighty-Four', '1984'])
      assert.deepEqual(await titles({ year_from: 2008 }), [
        'The Hunger Games (The Hunger Games, #1)',
        'Catching Fire (The Hunger Games, #2)',
        'Ordinary 100% _Wild_ [Cards]*',
      ])
      assert.deepEqual(await titles({ year_to: 0 }), ['éclair recipes', 'Eclair Recipes'])
      assert.deepEqual(await titles({ year_from: 1965, year_to: 1967 }), ['Cien años de soledad', 'Dune'])
      assert.deepEqual(await titles({ year: 1965, year_from: 1966 }), [])
      assert.deepEqual(await titles({ year: -44 }), ['éclair recipes'])
    })

    test('parameters combine with AND, and blank text counts as absent', async () => {
      assert.deepEqual(await titles({ q: 'dune', year_from: 1966, author: 'herbert' }), ['Dune Messiah', 'Children of Dune'])
      assert.deepEqual(await ids({ q: ' ', title: '', author: '\t' }), await ids({}))
    })

    describe('sort', () => {
      const byId = (a: Book, b: Book) => a.id - b.id
      const orders: Record<string, (a: Book, b: Book) => number> = {
        id: byId,
        '-id': (a, b) => b.id - a.id,
        title: (a, b) => compareTitles(a.title, b.title) || byId(a, b),
        '-title': (a, b) => compareTitles(b.title, a.title) || byId(a, b),
        author: (a, b) => compareFolded(a.author, b.author) || byId(a, b),
        '-author': (a, b) => compareFolded(b.author, a.author) || byId(a, b),
        year: (a, b) => a.year - b.year || byId(a, b),
        '-year': (a, b) => b.year - a.year || byId(a, b),
        '-year,title': (a, b) => b.year - a.year || compareTitles(a.title, b.title) || byId(a, b),
        'author,-year': (a, b) => compareFolded(a.author, b.author) || b.year - a.year || byId(a, b),
      }
      for (const [sort, compare] of Object.entries(orders)) {
        test(`by ${sort}, ties by id ascending`, async () => {
          assert.deepEqual(
            await ids({ sort }),
            [...books].sort(compare).map((book) => book.id),
          )
        })
      }

      test('text sorts as a person expects: case and accents ignored', async () => {
        const recipes = [idOf('éclair recipes'), idOf('Eclair Recipes')]
        const sorted = await ids({ sort: 'title', title: 'recipes' })
        assert.deepEqual(sorted, recipes)
        assert.deepEqual(await ids({ sort: '-title', title: 'recipes' }), recipes)
        const all = await titles({ sort: 'title' })
        assert.ok(all.indexOf('Dune') < all.indexOf('éclair recipes') && all.indexOf('éclair recipes') < all.indexOf('Fahrenheit 451'))
      })

      test('overrides relevance when given with q', async () => {
        assert.deepEqual(await titles({ q: 'dune', sort: 'title' }), ['Children of Dune', 'Dune', 'Dune Messiah'])
        assert.deepEqual(await titles({ q: 'dune', sort: '-year' }), ['Children of Dune', 'Dune Messiah', 'Dune'])
      })

      describe('title files a leading article after the rest', () => {
        const author = 'Filing Clerk'
        const filed: Book[] = []
        // In the order they are created, which breaks ties.
        const TITLES = [
          'The Hobbit',
          'Ivanhoe',
          'Harry Potter and the Goblet of Fire',
          'A Tale of Two Cities',
          'An Instance of the Fingerpost',
          'Theory of Everything',
          'the name of the rose',
          'the hobbit',
          'THE ÉCLAIR',
          'Anthem',
          'A',
          'The',
          'Hobbit',
        ]
        const ASCENDING = [
          'A',
          'Anthem',
          'THE ÉCLAIR',
          'Harry Potter and the Goblet of Fire',
          'Hobbit',
          'The Hobbit',
          'the hobbit',
          'An Instance of the Fingerpost',
          'Ivanhoe',
          'the name of the rose',
          'A Tale of Two Cities',
          'The',
          'Theory of Everything',
        ]
        // Ties still go by id, ascending, whichever way the titles go.
        const DESCENDING = [
          'Theory of Everything',
          'The',
          'A Tale of Two Cities',
          'the name of the rose',
          'Ivanhoe',
          'An Instance of the Fingerpost',
          'The Hobbit',
          'the hobbit',
          'Hobbit',
          'Harry Potter and the Goblet of Fire',
          'THE ÉCLAIR',
          'Anthem',
          'A',
        ]

        before(async () => {
          for (const [n, title] of TITLES.entries()) filed.push(await create({ title, author, year: 1900 + n }))
        })
        after(async () => {
          for (const book of filed) await store.books.delete('tester', book.id)
        })

        const filedTitles = async (params: Params) => {
          const res = await get(query({ author, ...params }))
          assert.equal(res.statusCode, 200, res.body)
          return res.json<ListBody>().data!.map((book) => book.title)
        }

        test('"The Hobbit" sorts under H, "A" and "An" go too, whatever their case; titles come as stored', async () => {
          assert.deepEqual(await filedTitles({ sort: 'title' }), ASCENDING)
          assert.deepEqual(await filedTitles({ sort: '-title' }), DESCENDING)
          assert.deepEqual(await filedTitles({ q: 'hobbit', sort: 'title' }), ['Hobbit', 'The Hobbit', 'the hobbit'])
          assert.deepEqual(await filedTitles({ sort: 'title', year_from: 1900, year_to: 1904 }), [
            'Harry Potter and the Goblet of Fire',
            'The Hobbit',
            'An Instance of the Fingerpost',
            'Ivanhoe',
            'A Tale of Two Cities',
          ])
        })

        test('among every book of the catalogue, and after another key', async () => {
          const all = (await get(query({ sort: 'title' }))).json<ListBody>().data!.map((book) => book.title)
          const at = (title: string) => all.indexOf(title)
          assert.ok(at('Harry Potter and the Goblet of Fire') < at('The Hobbit') && at('The Hobbit') < at('Ivanhoe'))
          const game = at('A Game of Thrones (A Song of Ice and Fire, #1)')
          assert.ok(at('Fahrenheit 451') < game && game < at('Garcia and the Sea'), 'under G')
          assert.ok(at('The Shining') < at('Solaris'), 'under S')
          assert.ok(at('At Swim-Two-Birds') < at('Catching Fire (The Hunger Games, #2)'), '"At" is no article')
          assert.deepEqual(
            (await filedTitles({ sort: 'year,title', year: 1907 })).concat(await filedTitles({ sort: '-year,title', year_from: 1911 })),
            ['the hobbit', 'Hobbit', 'The'],
          )
        })

        test('pages follow the filing order across the article, both ways', async () => {
          for (const [sort, expected] of [
            ['title', ASCENDING],
            ['-title', DESCENDING],
          ] as const) {
            for (const limit of [1, 2, 5]) {
              const { seen } = await walk(query({ author, sort, limit }))
              assert.deepEqual(
                seen.map((book) => book.title),
                expected,
                `sort=${sort}&limit=${limit}`,
              )
            }
          }
        })
      })
    })

    describe('count', () => {
      test('true adds X-Total-Count: every match, all pages together', async () => {
        const res = await get(query({ author: 'herbert', count: 'true', limit: 1 }))
        assert.equal(res.headers['x-total-count'], '3')
        assert.equal(res.json<ListBody>().data!.length, 1)
        assert.equal((await get(query({ count: 'true' }))).headers['x-total-count'], String(books.length))
        assert.equal((await get(query({ q: 'zzzz', count: 'true' }))).headers['x-total-count'], '0')
      })

      test('false or absent adds no header', async () => {
        for (const params of [{ count: 'false' }, {}, { q: 'dune' }, { q: 'dune', count: 'false', limit: 1 }]) {
          assert.equal((await get(query(params))).headers['x-total-count'], undefined)
        }
      })
    })

    describe('pages', () => {
      test('follow rel="next" through every match, in order, with every parameter in the link', async () => {
        for (const params of [
          { q: 'the', limit: 2 },
          { sort: '-year,title', limit: 3 },
          { sort: 'author', year_from: 1900, limit: 1, count: 'true' },
          { title: 'e', after: idOf('Dune'), limit: 2 },
          { q: 'g', sort: '-title', limit: 4 },
        ]) {
          const whole = await ids(Object.fromEntries(Object.entries(params).filter(([name]) => name !== 'limit')))
          const { seen, links } = await walk(query(params))
          assert.deepEqual(
            seen.map((book) => book.id),
            whole,
            JSON.stringify(params),
          )
          assert.equal(links.length, Math.ceil(whole.length / params.limit) - 1)
          for (const link of links) {
            const url = new URL(/^<([^>]+)>/.exec(link)![1]!, 'http://x')
            assert.equal(url.pathname, '/books')
            for (const [name, value] of Object.entries(params)) assert.equal(url.searchParams.get(name), String(value))
            assert.match(url.searchParams.get('cursor')!, /^[\w-]+\.[\w-]+$/)
          }
        }
      })

      test('a page that ends at the last match has no Link', async () => {
        const res = await get(query({ author: 'herbert', limit: 3 }))
        assert.equal(res.json<ListBody>().data!.length, 3)
        assert.equal(res.headers.link, undefined)
      })

      test('stay exact while other clients add and delete books', async () => {
        const tag = `Paging ${faker.string.alphanumeric(8)}`
        const initial: Book[] = []
        for (let n = 0; n < 30; n++) initial.push(await create({ title: `${tag} ${String(n % 7)}`, author: 'Pager', year: 1900 + (n % 5) }))
        const survivors = new Set(initial.map((book) => book.id))
        const added: number[] = []
        for (const params of [
          { q: tag, limit: 4 },
          { title: tag, sort: 'title,-year', limit: 4 },
          { author: 'pager', sort: '-year', limit: 5 },
        ]) {
          let n = 0
          const { seen } = await walk(query(params), async (sofar) => {
            // Between pages: delete one book the walk has not reached yet and one it has, add two.
            const reached = new Set(sofar.map((book) => book.id))
            const remaining = [...survivors].filter((id) => !reached.has(id))
            const victims = [remaining.at(-1), [...reached].find((id) => survivors.has(id))]
            for (const id of victims) {
              if (id === undefined) continue
              assert.equal((await app.inject(withToken(token, { method: 'DELETE', url: `/book/${id}` }))).statusCode, 200)
              survivors.delete(id)
            }
            for (let i = 0; i < 2; i++) added.push((await create({ title: `${tag} ${n++ % 7}`, author: 'Pager', year: 1902 })).id)
          })
          const seenIds = new Set<number>()
          for (const book of seen) {
            assert.ok(!seenIds.has(book.id), `${book.id} came twice with ${JSON.stringify(params)}`)
            seenIds.add(book.id)
          }
          for (const id of survivors) assert.ok(seenIds.has(id), `${id} was skipped with ${JSON.stringify(params)}`)
        }
        for (const id of [...survivors, ...added]) await app.inject(withToken(token, { method: 'DELETE', url: `/book/${id}` }))
      })

      test('a cursor works only with the parameters it was issued for', async () => {
        const first = await get(query({ q: 'the', limit: 1 }))
        const link = /^<([^>]+)>/.exec(first.headers.link as string)![1]!
        const cursor = new URL(link, 'http://x').searchParams.get('cursor')!
        assert.equal((await get(link)).statusCode, 200)
        for (const params of [
          { q: 'the', limit: 2, cursor },
          { q: 'thx', limit: 1, cursor },
          { q: 'the', cursor },
          { q: 'the', limit: 1, count: 'true', cursor },
          { q: 'the', limit: 1, sort: 'id', cursor },
          { limit: 1, cursor },
          { q: 'the', limit: 1, cursor: `${cursor}x` },
          { q: 'the', limit: 1, cursor: 'WzEsMV0.AAAA' },
          { q: 'the', limit: 1, cursor: '' },
        ]) {
          const res = await get(query(params))
          assert.equal(res.statusCode, 400, JSON.stringify(params))
          assert.deepEqual(res.json(), { status: 400, message: 'Invalid input', data: null })
        }
      })
    })

    describe('answers 400 Invalid input', () => {
      const cases: Record<string, string> = {
        'an unknown sort field': 'sort=name',
        'a repeated sort field': 'sort=title,-title',
        'an empty sort field': 'sort=title,',
        'an empty sort': 'sort=',
        'a year that is not an integer': 'year=1.5',
        'a year over 9999': 'year=10000',
        'a year under -9999': 'year=-10000',
        'a year_from that is not an integer': 'year_from=abc',
        'a year_from out of range': 'year_from=99999',
        'a year_to that is not an integer': 'year_to=1e3',
        'a year_to out of range': 'year_to=-10000',
        'year_from greater than year_to': 'year_from=2001&year_to=2000',
        'count that is neither true nor false': 'count=yes',
        'an empty count': 'count=',
        'q over 200 characters': `q=${'a'.repeat(201)}`,
        'title over 200 characters': `title=${'a'.repeat(201)}`,
        'author over 200 characters': `author=${'é'.repeat(201)}`,
        'a cursor the service did not issue': 'limit=5&cursor=abc.def',
        'after with q': 'after=1&q=dune',
        'after with a sort other than id': 'after=1&sort=title',
        'after with a descending id sort': 'after=1&sort=-id',
        'a parameter given twice': 'q=a&q=b',
      }
      for (const [name, params] of Object.entries(cases)) {
        test(name, async () => {
          const res = await get(`/books?${params}`)
          assert.equal(res.statusCode, 400)
          assert.deepEqual(res.json(), { status: 400, message: 'Invalid input', data: null })
        })
      }
    })

    test('every answer is the envelope, with books of exactly four members', async () => {
      for (const params of [{ q: 'dune' }, { sort: 'title', limit: 2 }, { title: 'e', count: 'true' }]) {
        const res = await get(query(params))
        assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
        const body = res.json<ListBody>()
        assert.deepEqual(Object.keys(body), ['status', 'message', 'data'])
        assert.equal(body.message, 'Books retrieved successfully')
        for (const book of body.data!) assert.deepEqual(Object.keys(book), ['id', 'title', 'author', 'year'])
      }
    })

    test('without a limit, a search longer than one batch comes back whole, in order', async () => {
      const created: number[] = []
      for (let n = 0; n < 1100; n++)
        created.push((await store.books.create('tester', { title: `Batch ${n}`, author: 'Bulk', year: 1800 + (n % 50) })).id)
      const res = await get(query({ author: 'bulk', sort: '-year', count: 'true' }))
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['x-total-count'], '1100')
      const found = JSON.parse(res.body) as ListBody
      const expected = created
        .map((id, n) => ({ id, year: 1800 + (n % 50) }))
        .sort((a, b) => b.year - a.year || a.id - b.id)
        .map((book) => book.id)
      assert.deepEqual(
        found.data!.map((book) => book.id),
        expected,
      )
      for (const id of created) await store.books.delete('tester', id)
    })

    describe('relevance on generated books', () => {
      const seed = Number(process.env.SEARCH_SEED ?? Date.now() % 100_000)
      const generated: Book[] = []

      before(async () => {
        faker.seed(seed)
        for (let n = 0; n < 300; n++) {
          const title = faker.helpers.arrayElement([
            () => faker.book.title(),
            () => `${faker.book.title()} (${faker.book.series()}, #${faker.number.int({ min: 1, max: 9 })})`,
            () => faker.lorem.words({ min: 1, max: 6 }),
          ])()
          const author = faker.helpers.arrayElement([
            () => faker.book.author(),
            () => `${faker.person.fullName()}, ${faker.person.fullName()}`,
          ])()
          generated.push(await create({ title, author, year: faker.number.int({ min: -500, max: 2025 }) }))
        }
      })
      after(async () => {
        for (const book of generated) await store.books.delete('tester', book.id)
      })

      test(`every engine orders matches as the contract's model does (seed ${seed}, SEARCH_SEED=${seed} repeats it)`, async () => {
        faker.seed(seed + 1)
        const all = (await get('/books')).json<ListBody>().data!
        for (let n = 0; n < 60; n++) {
          const book = faker.helpers.arrayElement(generated)
          const words = `${book.title} ${book.author}`.split(/\s+/).filter(Boolean)
          const picked = faker.helpers.arrayElements(words, { min: 1, max: 2 })
          const q = picked.map((word) => word.slice(0, faker.number.int({ min: 1, max: Math.max(1, word.length) }))).join(' ')
          const model: ModelQuery = { q, yearFrom: n % 3 === 0 ? 1000 : undefined }
          const params: Params = { q }
          if (model.yearFrom !== undefined) params.year_from = model.yearFrom
          assert.deepEqual(await ids(params), expectedIds(all, model), `seed ${seed}, q=${JSON.stringify(q)}`)
        }
      })
    })

    describe('relevance of words that begin many titles, page by page', () => {
      const added: Book[] = []

      before(async () => {
        faker.seed(20_261_128)
        // Titles that begin with the words, whole, of many lengths, some equal; and books that
        // hold the words elsewhere, or only as beginnings, which rank below them.
        for (let n = 0; n < 40; n++) {
          const title = n % 5 === 4 ? `The ${faker.word.noun()}` : `The ${faker.word.adjective()} ${faker.word.noun()}`
          added.push(await create({ title, author: faker.person.fullName(), year: 2000 }))
        }
        for (const title of [
          'Theory of the Old',
          'Of the Old Sea',
          'The Old Man',
          'The Old',
          'The Oldest House',
          'The Old Curiosity Shop',
          'A Moveable Feast',
          'Axe',
        ]) {
          added.push(await create({ title, author: 'The Olds', year: 2001 }))
        }
        added.push(await create({ title: 'Nothing Here', author: 'The Old Author', year: 2002 }))
      })
      after(async () => {
        for (const book of added) await store.books.delete('tester', book.id)
      })

      test('every page follows the order of the whole, through the titles that begin with them and past them', async () => {
        const all = (await get('/books')).json<ListBody>().data!
        for (const q of ['the', 'the old', 'a', 'th']) {
          const whole = expectedIds(all, { q })
          assert.ok(whole.length > 6, q)
          const seen: number[] = []
          // Bounded, so that a cursor that goes back fails instead of looping.
          let next: string | undefined = query({ q, limit: 3 })
          for (let page = 0; next !== undefined && page <= whole.length / 3; page++) {
            const res: LightMyRequestResponse = await get(next)
            assert.equal(res.statusCode, 200, res.body)
            seen.push(...res.json<ListBody>().data!.map((book) => book.id))
            next = /^<([^>]+)>/.exec(String(res.headers.link ?? ''))?.[1]
          }
          assert.deepEqual(seen, whole, q)
        }
      })
    })
  })
}
