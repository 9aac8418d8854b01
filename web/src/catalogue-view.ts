import type { Api, Book } from './api.ts'
import { openBookDialog } from './book-dialog.ts'
import { yearProblem } from './book-rules.ts'
import { createBookTable } from './book-table.ts'
import { bookTransfer } from './book-transfer.ts'
import { confirmDelete } from './confirm-dialog.ts'
import { h, uniqueId } from './dom.ts'
import { EVERY_BOOK, firstPageUrl, isFiltered, type FindQuery, type SortField } from './find-query.ts'
import { createMessages, describeError } from './messages.ts'

/** Long enough to wait for the next keystroke, short enough to feel immediate. */
const SEARCH_DELAY_MS = 250

function filterField(label: string, attributes: Record<string, string>) {
  const id = uniqueId('filter')
  const input = h('input', { id, autocomplete: 'off', ...attributes })
  const error = h('p', { id: `${id}-error`, class: 'field-error', role: 'alert' })
  input.setAttribute('aria-describedby', error.id)
  return { input, error, wrapper: h('div', { class: 'field' }, h('label', { for: id }, label), input, error) }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

/** The signed-in page: find, browse, add, edit, delete, import and export books. */
export function catalogueView(api: Api): HTMLElement {
  const messages = createMessages()
  // The service takes at most 200 characters of each (CONTRACT section 9).
  const search = filterField('Search', {
    type: 'search',
    spellcheck: 'false',
    maxlength: '200',
    placeholder: 'Words from a title or an author',
  })
  const author = filterField('Filter by author', { type: 'text', maxlength: '200' })
  const yearFrom = filterField('From year', { inputmode: 'numeric', class: 'year' })
  const yearTo = filterField('To year', { inputmode: 'numeric', class: 'year' })
  const finder = h(
    'form',
    { role: 'search', class: 'finder', novalidate: true },
    search.wrapper,
    h('div', { class: 'filters' }, author.wrapper, yearFrom.wrapper, yearTo.wrapper),
  )
  const count = h('p', { role: 'status', class: 'count' })
  const addButton = h('button', { type: 'button', class: 'primary' }, 'Add book')
  // A live region, so that "no match" is heard as well as seen.
  const empty = h('p', { class: 'empty', role: 'status' })
  const loadMore = h('button', { type: 'button', class: 'load-more', hidden: true }, 'Load more')
  const table = createBookTable({ sort: sortBy, edit, remove })
  const view = h(
    'section',
    { class: 'catalogue', 'aria-label': 'Catalogue' },
    finder,
    messages.element,
    h('div', { class: 'summary' }, count, addButton),
    h('div', { class: 'table-wrap' }, table.element),
    empty,
    loadMore,
    bookTransfer(api, messages, { query: () => query, imported: () => load() }),
  )

  let query: FindQuery = { ...EVERY_BOOK }
  let books: Book[] = []
  let next: string | undefined
  let total: number | undefined
  let loading: AbortController | undefined
  /** The address of the next page while it is being loaded. */
  let loadingMore: string | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  function render() {
    table.show(books, query.sort)
    table.element.hidden = books.length === 0
    if (books.length > 0 || loading !== undefined) empty.textContent = ''
    else
      empty.textContent = isFiltered(query) ? 'No books match this search.' : 'The catalogue is empty. Add the first book with “Add book”.'
    loadMore.hidden = next === undefined
    if (books.length === 0) {
      // The message in place of the table says it already.
      count.textContent = ''
    } else if (total !== undefined) {
      const what = isFiltered(query) ? `${plural(total, 'book')} match` : `${plural(total, 'book')} in the catalogue`
      count.textContent = books.length < total ? `${what}; showing ${books.length}` : what
    } else {
      count.textContent = `Showing ${plural(books.length, 'book')}${next === undefined ? '' : '; more to load'}`
    }
  }

  /**
   * Loads the first page, or with `more` the next one. A newer search cancels an older load;
   * asking again for the page already on its way (a click while scrolling loads it) does nothing.
   */
  async function load(more = false) {
    const url = more ? next : firstPageUrl(query)
    if (url === undefined || (more && url === loadingMore)) return
    loading?.abort()
    const controller = new AbortController()
    loading = controller
    loadingMore = more ? url : undefined
    table.element.setAttribute('aria-busy', 'true')
    try {
      const page = await api.findBooks(url, controller.signal)
      const firstNew = page.books[0]
      const buttonHadFocus = document.activeElement === loadMore
      books = more ? [...books, ...page.books] : page.books
      next = page.next
      total = page.total
      messages.clear()
      loading = loadingMore = undefined
      render()
      // The button disappears after the last page: its focus goes to the first book it brought.
      if (buttonHadFocus && next === undefined && firstNew) table.focusRow(firstNew.id)
    } catch (err) {
      if (controller.signal.aborted) return
      loading = loadingMore = undefined
      render()
      messages.error(describeError(err), () => void load(more))
    } finally {
      if (loading === undefined) table.element.removeAttribute('aria-busy')
    }
  }

  function readFilters(): boolean {
    const problems = [yearFrom, yearTo].map(({ input, error }) => {
      const problem = input.value.trim() === '' ? undefined : yearProblem(input.value)
      error.textContent = problem?.replace('Year', 'The year') ?? ''
      input.toggleAttribute('aria-invalid', problem !== undefined)
      return problem
    })
    if (problems.some((problem) => problem !== undefined)) return false
    if (
      yearFrom.input.value.trim() !== '' &&
      yearTo.input.value.trim() !== '' &&
      Number(yearFrom.input.value) > Number(yearTo.input.value)
    ) {
      yearTo.error.textContent = 'The “To year” must not be before the “From year”.'
      yearTo.input.setAttribute('aria-invalid', 'true')
      return false
    }
    query = { ...query, q: search.input.value, author: author.input.value, yearFrom: yearFrom.input.value, yearTo: yearTo.input.value }
    return true
  }

  function findSoon() {
    clearTimeout(timer)
    timer = setTimeout(() => {
      if (readFilters()) void load()
    }, SEARCH_DELAY_MS)
  }

  function sortBy(field: SortField) {
    const descending = query.sort?.field === field && !query.sort.descending
    query = { ...query, sort: { field, descending } }
    void load()
  }

  async function edit(book: Book) {
    messages.clear()
    try {
      const stored = await api.getBook(book.id)
      replace(stored.book)
      openBookDialog(view, api, stored, {
        saved: (saved) => {
          replace(saved)
          messages.notice(`Saved “${saved.title}”.`)
        },
        changed: replace,
        gone: forget,
      })
    } catch (err) {
      messages.error(describeError(err))
      if ((err as { status?: number }).status === 404) forget(book.id)
    }
  }

  async function remove(book: Book) {
    if (!(await confirmDelete(view, book))) return
    messages.clear()
    try {
      await api.deleteBook(book.id)
      const index = books.findIndex((shown) => shown.id === book.id)
      forget(book.id)
      messages.notice(`Deleted “${book.title}”.`)
      const neighbour = books[index] ?? books[index - 1]
      if (!neighbour || !table.focusRow(neighbour.id)) addButton.focus()
    } catch (err) {
      if ((err as { status?: number }).status === 404) forget(book.id)
      messages.error(describeError(err), () => void remove(book))
    }
  }

  function replace(book: Book) {
    books = books.map((shown) => (shown.id === book.id ? book : shown))
    render()
  }

  function forget(id: number) {
    const before = books.length
    books = books.filter((shown) => shown.id !== id)
    if (total !== undefined && books.length < before) total -= 1
    render()
  }

  addButton.addEventListener('click', () => {
    messages.clear()
    openBookDialog(view, api, undefined, {
      saved: (created) => {
        // Shown first, where the person looks, whatever the order; a new search puts it in its place.
        books = [created, ...books]
        if (total !== undefined) total += 1
        render()
        messages.notice(`Added “${created.title}”.`)
      },
      changed: replace,
      gone: forget,
    })
  })
  loadMore.addEventListener('click', () => void load(true))
  // More books load as the person scrolls near the end of the table; the button stays for the keyboard.
  new IntersectionObserver(
    (entries) => {
      if (entries.some((entry) => entry.isIntersecting)) void load(true)
    },
    { rootMargin: '0px 0px 300px 0px' },
  ).observe(loadMore)
  finder.addEventListener('input', findSoon)
  finder.addEventListener('submit', (event) => {
    event.preventDefault()
    clearTimeout(timer)
    if (readFilters()) void load()
  })
  // Back online: what failed for want of a network is tried again.
  window.addEventListener('online', () => {
    if (view.isConnected && messages.element.querySelector('[role="alert"] button')) void load()
  })

  void load()
  return view
}
