import { ApiError, type Book, type BookCatalogue, type Change, type Role } from 'book-catalogue-client'
import { FIRST_VIEW, readAddress, writeAddress, type ViewState } from './address.ts'
import { actOnBooks } from './book-batch.ts'
import { openBookDetails } from './book-details.ts'
import { openBookDialog, type BookDialog } from './book-dialog.ts'
import { createBookTable } from './book-table.ts'
import { followChanges } from './change-feed.ts'
import { booksCsv } from './books-csv.ts'
import { confirmDelete } from './confirm-dialog.ts'
import { h } from './dom.ts'
import { describeOrder, exportQuery, isFiltered, sameQuery, type SortField } from './find-query.ts'
import { createFinder } from './finder.ts'
import { openImportDialog } from './import-dialog.ts'
import { createMessages, describeError } from './messages.ts'
import { countOf, formatNumber } from './numbers.ts'
import { createPager } from './pager.ts'
import { createResults, type Results } from './results.ts'
import { atLeast } from './roles.ts'
import { saveFile } from './save-file.ts'
import { createSelectionBar } from './selection-bar.ts'
import { createSelection } from './selection.ts'
import { listenForShortcuts, openShortcutsDialog } from './shortcuts.ts'

/** How often a long deletion or restore says how far it got: often enough to follow, rarely enough for a screen reader. */
const PROGRESS_INTERVAL_MS = 1000
/**
 * How long the page gathers books that others added before it asks its query again, once for all
 * of them: an import elsewhere is one reading, not thousands.
 */
const GATHER_MS = 200

/**
 * The signed-in page: find, browse page by page, select, add, edit, delete, import and export
 * books, and undo a deletion or an edit. A reader gets no control that changes a book. What it
 * shows lives in the address; `signal` ends its listeners when the person signs out.
 */
export function catalogueView(client: BookCatalogue, role: Role, signal: AbortSignal): HTMLElement {
  const canEdit = atLeast(role, 'editor')
  const messages = createMessages()
  const finder = createFinder(filtersChanged)
  const addButton = h('button', { type: 'button', class: 'primary' }, 'Add book')
  const importButton = h('button', { type: 'button' }, 'Import books')
  const exportButton = h('button', { type: 'button' }, 'Export CSV')
  /** Where the focus goes when the control that had it is gone and no row can take it. */
  const home = canEdit ? addButton : exportButton
  const selection = createSelection(selectionChanged)
  const selectionBar = createSelectionBar({
    selectAll: () => void selectAll(),
    exportSelected: () => void exportSelected(),
    deleteSelected: canEdit ? () => void deleteSelected() : undefined,
    clear: () => selection.clear(),
  })
  // Always in reach, however far down the table the person is: the toolbar stays at the top of the window.
  const toolbar = h(
    'div',
    { class: 'toolbar' },
    finder.element,
    h('div', { class: 'actions' }, canEdit && addButton, canEdit && importButton, exportButton),
    messages.element,
    selectionBar.element,
  )
  const count = h('p', { role: 'status', class: 'count' })
  const table = createBookTable({ sort: sortBy, open: (book) => void edit(book), select, selectShown })
  // A live region, so that "no match" is heard as well as seen.
  const empty = h('p', { class: 'empty', role: 'status' })
  const pager = createPager({
    go(page) {
      // Read before the rows change, while the layout is clean: reading it after would lay the new rows out in this task.
      const scrolledPast = table.element.getBoundingClientRect().top < toolbar.getBoundingClientRect().bottom
      void go({ ...state, page }, 'push').then(() => {
        // The new page from its first row, where the person looks after paging from the pager below the table.
        if (scrolledPast) requestAnimationFrame(() => table.element.scrollIntoView({ block: 'start' }))
      })
    },
    resize(size) {
      // The first book of the page shown stays on the page shown.
      const first = (state.page - 1) * state.size
      void go({ ...state, size, page: Math.floor(first / size) + 1 }, 'push')
    },
  })
  const view = h(
    'section',
    { class: 'catalogue', 'aria-label': 'Catalogue', tabindex: '-1' },
    toolbar,
    count,
    h('div', { class: 'table-wrap' }, table.element),
    empty,
    pager.element,
  )

  let state: ViewState = FIRST_VIEW
  /** The books of `state.query`; undefined while a filter is wrong, so that no stale row stays. */
  let results: Results | undefined
  /** True while each key typed into the filters replaces the address: one history entry per search. */
  let typing = false
  /** What the address asked for that cannot be shown, said once the books are there. */
  let addressNotes: string[] = []
  /** The page the address asked for, to say so when it is past the end. */
  let addressPage: number | undefined
  /** The row a Shift-click selects from. */
  let anchor: number | undefined
  /** The book being edited, told of the changes others make meanwhile. */
  let editing: BookDialog | undefined
  /** Books others added or brought back, to be placed by asking the query again. */
  const arrived = new Set<number>()
  /**
   * Books this page is bringing back from the trash, until the feed tells of their restoring or
   * purging: a deletion heard before that is the one being undone, heard late, and would take the
   * book brought back off the page again.
   */
  const restoring = new Set<number>()
  let gathering: ReturnType<typeof setTimeout> | undefined
  /** How many readings were asked for, and the last one's promise. */
  let shows = 0
  let latestShow = Promise.resolve()

  const pageCount = (): number => Math.max(1, Math.ceil((results?.total() ?? 0) / state.size))
  const pageBooks = (): readonly Book[] => results?.books().slice((state.page - 1) * state.size, state.page * state.size) ?? []

  function render() {
    const books = pageBooks()
    // Rows are drawn anew: a book that had the focus keeps it, whatever redrew the table (a change heard from others included).
    const focusedRow =
      document.activeElement instanceof HTMLElement && table.element.contains(document.activeElement)
        ? document.activeElement.closest<HTMLElement>('tr[data-id]')?.dataset.id
        : undefined
    table.show(books, state.query.sort, selection.has)
    if (focusedRow !== undefined && !table.element.contains(document.activeElement)) table.focusRow(Number(focusedRow))
    table.element.hidden = books.length === 0
    pager.element.hidden = books.length === 0
    pager.show(state.page, pageCount(), state.size)
    if (results === undefined) empty.textContent = 'No books are shown until the filters are corrected.'
    else if (books.length > 0) empty.textContent = ''
    else if (isFiltered(state.query)) empty.textContent = 'No books match this search.'
    else empty.textContent = canEdit ? 'The catalogue is empty. Add the first book with “Add book”.' : 'The catalogue is empty.'
    // With no book, the message in place of the table says it already.
    count.textContent = books.length === 0 ? '' : describeShown(books.length, results?.total() ?? 0)
    showSelectionBar()
  }

  function describeShown(shown: number, total: number): string {
    const what = isFiltered(state.query)
      ? `${countOf(total, 'book')} ${total === 1 ? 'matches' : 'match'}`
      : `${countOf(total, 'book')} in the catalogue`
    const first = (state.page - 1) * state.size + 1
    const range = shown < total ? `, showing ${formatNumber(first)}–${formatNumber(first + shown - 1)}` : ''
    return `${what}${range}, ${describeOrder(state.query)}.`
  }

  /**
   * Shows the page `state` asks for, reading what it needs first. A newer state or query makes
   * an older reading moot: it settles when the newer one is shown, so that whoever awaits it
   * finds the table as it now is. A page past the end shows the last one.
   */
  function show({ quiet = false } = {}): Promise<void> {
    const mine = ++shows
    latestShow = showOnce(quiet, mine)
    return latestShow
  }

  async function showOnce(quiet: boolean, mine: number): Promise<void> {
    const asked = state
    const current = results
    if (current === undefined) return render()
    const superseded = () => (mine === shows ? undefined : latestShow)
    table.element.setAttribute('aria-busy', 'true')
    try {
      await current.ensure(asked.page * asked.size)
    } catch (err) {
      if (current !== results || asked !== state) return superseded()
      table.element.removeAttribute('aria-busy')
      if (!quiet) messages.error(describeError(err), () => void show())
      return
    }
    if (current !== results || asked !== state) return superseded()
    table.element.removeAttribute('aria-busy')
    const pages = pageCount()
    if (state.page > pages) {
      if (addressPage !== undefined)
        addressNotes.push(
          `page=${addressPage}: there ${pages === 1 ? 'is 1 page' : `are ${formatNumber(pages)} pages`}, so the last is shown`,
        )
      state = { ...state, page: pages }
      history.replaceState(null, '', address(state))
    }
    addressPage = undefined
    // What others changed is shown without a word: the messages the person is reading stay.
    if (!quiet) messages.clear()
    render()
    if (addressNotes.length > 0) messages.notice(`Parts of the address were left out: ${addressNotes.join('; ')}.`)
    addressNotes = []
  }

  const address = (shown: ViewState) => `${location.pathname}${writeAddress(shown)}`

  /** Moves to `next`, recording it in the address as a new history entry, in place of the current one, or not at all. */
  function go(next: ViewState, record: 'push' | 'replace' | 'none'): Promise<void> {
    const newQuery = results === undefined || !sameQuery(next.query, state.query)
    state = next
    typing = false
    const target = address(state)
    if (record !== 'none' && target !== `${location.pathname}${location.search}`) {
      if (record === 'push') history.pushState(null, '', target)
      else history.replaceState(null, '', target)
    }
    if (newQuery) {
      results?.close()
      results = createResults((url, signal) => client.books.page(url, { signal }), state.query, state.page * state.size)
    }
    return show()
  }

  /** Shows what the address asks for: at the start, and after the back and forward buttons. */
  function openAddress(): Promise<void> {
    const { state: asked, ignored } = readAddress(location.search)
    finder.fill(asked.query)
    addressNotes = ignored
    addressPage = asked.page
    // An address edited by hand becomes the one of what is shown.
    return go(asked, ignored.length > 0 ? 'replace' : 'none')
  }

  /** Asks the query again, for the same page: after an import or a deletion of many, or books others added. */
  function reload({ quiet = false } = {}): Promise<void> {
    results?.close()
    results = createResults((url, signal) => client.books.page(url, { signal }), state.query, state.page * state.size)
    return show({ quiet })
  }

  /**
   * Shows what another person (or this one, elsewhere) changed, as it happens: a changed book in
   * its row, a deleted one gone; books added are placed by asking the query again, which the
   * page alone cannot order. Nothing the person is typing is touched, and the book being edited
   * says at once that it changed.
   */
  function heard(change: Change) {
    if (change.kind === 'restored' || change.kind === 'purged') restoring.delete(change.book_id)
    else if (change.kind === 'deleted' && restoring.has(change.book_id)) return
    editing?.heard(change)
    // Under a wrong filter nothing is shown: the search asked once it is corrected shows the books as they are then.
    if (results === undefined) return
    const held = results.books().some((book) => book.id === change.book_id)
    if (change.kind === 'deleted' || change.kind === 'purged') {
      if (!held) return
      const ids = new Set([change.book_id])
      results.forget(ids)
      selection.forget(ids)
      void show({ quiet: true })
    } else if (held) replace(change.book!)
    else if (change.kind !== 'updated' || isFiltered(state.query)) gather(change.book_id)
  }

  function gather(id: number) {
    arrived.add(id)
    gathering ??= setTimeout(() => {
      gathering = undefined
      // Books this person added are shown already, where they look: asking again would move them.
      const unseen = [...arrived].some((book) => !results?.books().some((held) => held.id === book))
      arrived.clear()
      if (unseen && results !== undefined) void reload({ quiet: true })
    }, GATHER_MS)
  }

  function filtersChanged() {
    const filters = finder.read()
    if (filters === undefined) {
      // A wrong filter finds nothing: the books found before go, rather than seem to match it.
      results?.close()
      results = undefined
      messages.clear()
      render()
      return
    }
    const query = { ...filters, sort: state.query.sort }
    if (results !== undefined && sameQuery(query, state.query)) return
    void go({ ...state, query, page: 1 }, typing ? 'replace' : 'push')
    typing = true
  }

  function sortBy(field: SortField) {
    const descending = state.query.sort?.field === field && !state.query.sort.descending
    void go({ ...state, query: { ...state.query, sort: { field, descending } }, page: 1 }, 'push')
  }

  function selectionChanged() {
    const hadFocus = selectionBar.element.contains(document.activeElement)
    table.showSelection(selection.has)
    showSelectionBar()
    // Clearing hides the bar: its button's focus goes to the table, not to the start of the page.
    if (hadFocus && selectionBar.element.hidden) focusTable()
  }

  function showSelectionBar() {
    const total = results?.total() ?? 0
    const everySelected = results !== undefined && results.complete() && results.books().every((book) => selection.has(book.id))
    selectionBar.show(selection.size(), total > 0 && !everySelected ? total : undefined, isFiltered(state.query))
  }

  function focusTable() {
    const first = pageBooks()[0]
    if (!first || !table.focusRow(first.id)) home.focus()
  }

  function select(book: Book, selected: boolean, range: boolean) {
    const books = results?.books() ?? []
    const to = books.findIndex((held) => held.id === book.id)
    const from = range && anchor !== undefined ? books.findIndex((held) => held.id === anchor) : -1
    selection.set(from >= 0 && to >= 0 ? books.slice(Math.min(from, to), Math.max(from, to) + 1) : [book], selected)
    anchor = book.id
  }

  function selectShown(selected: boolean) {
    selection.set(pageBooks(), selected)
  }

  async function selectAll() {
    const current = results
    if (current === undefined) return
    selectionBar.busy('Selecting every matching book…')
    try {
      await current.ensure(Infinity)
    } catch (err) {
      if (current === results) messages.error(describeError(err), () => void selectAll())
      return
    } finally {
      selectionBar.busy(undefined)
    }
    if (current === results) selection.set(current.books(), true)
  }

  function exportSelected() {
    saveFile(new Blob([booksCsv(selection.books())], { type: 'text/csv;charset=utf-8' }), 'selected-books.csv')
  }

  async function exportAll() {
    messages.clear()
    exportButton.disabled = true
    try {
      // Read whole and saved through an object URL: a link to the route itself could not send the token.
      saveFile(await new Response(await client.books.export(exportQuery(state.query))).blob(), 'books.csv')
    } catch (err) {
      messages.error(describeError(err))
    } finally {
      exportButton.disabled = false
    }
  }

  async function deleteSelected() {
    const books = selection.books()
    if (await confirmDelete(view, books)) await deleteNow(books)
  }

  /** Deletes books the person confirmed; what could not be deleted stays selected, to try again. */
  async function deleteNow(books: readonly Book[]) {
    messages.clear()
    let said = 0
    selectionBar.busy(`Deleting ${countOf(books.length, 'book')}…`)
    const { done: deleted, failure } = await actOnBooks(
      (id) => client.books.delete(id),
      books,
      (done) => {
        if (performance.now() - said < PROGRESS_INTERVAL_MS) return
        said = performance.now()
        selectionBar.busy(`Deleted ${formatNumber(done)} of ${countOf(books.length, 'book')}…`)
      },
    )
    selectionBar.busy(undefined)
    selection.forget(new Set(deleted.map((book) => book.id)))
    await reload()
    reportDeleted(deleted)
    if (failure !== undefined) {
      const left = books.filter((book) => selection.has(book.id))
      messages.error(
        `${describeError(failure)} ${countOf(left.length, 'book')} not deleted ${left.length === 1 ? 'stays' : 'stay'} selected.`,
        () => void deleteNow(left),
      )
    }
    if (!view.contains(document.activeElement) || selectionBar.element.hidden) focusTable()
  }

  /** Says what was deleted, with one "Undo" for all of it: the one place that hears of every deletion, single or many. */
  function reportDeleted(deleted: readonly Book[]) {
    if (deleted.length === 0) return
    messages.notice(deleted.length === 1 ? `Deleted “${deleted[0]!.title}”.` : `Deleted ${countOf(deleted.length, 'book')}.`, {
      label: 'Undo',
      run: () => void restoreNow(deleted),
    })
  }

  /** Brings deleted books back from the trash, a few at a time; what could not be restored is offered again. */
  async function restoreNow(books: readonly Book[]) {
    let said = performance.now()
    messages.notice(`Restoring ${countOf(books.length, 'book')}…`)
    for (const book of books) restoring.add(book.id)
    const { done: restored, failure } = await actOnBooks(
      (id) => client.books.restore(id),
      books,
      (done) => {
        if (performance.now() - said < PROGRESS_INTERVAL_MS) return
        said = performance.now()
        messages.notice(`Restored ${formatNumber(done)} of ${countOf(books.length, 'book')}…`)
      },
    )
    await reload()
    if (restored.length > 0)
      messages.notice(restored.length === 1 ? `Restored “${restored[0]!.title}”.` : `Restored ${countOf(restored.length, 'book')}.`)
    if (failure !== undefined) {
      const left = books.filter((book) => !restored.includes(book))
      for (const book of left) restoring.delete(book.id)
      messages.error(`${describeError(failure)} ${countOf(left.length, 'book')} not restored yet.`, () => void restoreNow(left))
    }
    // The focus was on "Undo", which is gone: it goes to the book brought back, where the person looks for it.
    if (!view.contains(document.activeElement) || document.activeElement === view) {
      const first = restored[0]
      if (!first || !table.focusRow(first.id)) focusTable()
    }
  }

  /** Says what was saved, with an "Undo" that gives the book the values it had before. */
  function reportSaved(book: Book, etag: string | undefined) {
    messages.notice(`Saved “${book.title}”.`, { label: 'Undo', run: () => void undoEdit(book, etag) })
  }

  /**
   * Undoes an edit: the change before it in the book's history is the version the person edited,
   * and `etag`, the book's after the edit, makes sure no later change is overwritten.
   */
  async function undoEdit(book: Book, etag: string | undefined) {
    messages.clear()
    const changedSince = `“${book.title}” was changed again since, so the edit was not undone. Its History shows every version.`
    try {
      const before = (await client.books.history(book.id, { limit: 2 }).page()).items[1]
      if (before === undefined) messages.error(changedSince)
      else {
        const reverted = await client.books.revert(book.id, before.seq, { ifMatch: etag })
        replace(reverted.book)
        messages.notice(`Undid the edit of “${book.title}”.`)
      }
    } catch (err) {
      messages.error(err instanceof ApiError && err.status === 412 ? changedSince : describeError(err))
    }
    if (!view.contains(document.activeElement) || document.activeElement === view) {
      if (!table.focusRow(book.id)) focusTable()
    }
  }

  async function edit(book: Book) {
    messages.clear()
    try {
      const stored = await client.books.get(book.id)
      replace(stored.book)
      if (!canEdit) {
        openBookDetails(view, client, stored.book)
        return
      }
      editing = openBookDialog(view, client, stored, {
        saved: (saved, etag) => {
          replace(saved)
          reportSaved(saved, etag)
        },
        changed: replace,
        gone: (id) => void forget(id),
        remove: (confirmed, etag) => void remove(confirmed, etag),
      })
    } catch (err) {
      if ((err as { status?: number }).status === 404) await forget(book.id)
      messages.error(describeError(err))
    }
  }

  /**
   * Deletes one book the person confirmed in its dialog, if it is still the version `etag` they
   * saw; the focus goes to the row that takes its place.
   */
  async function remove(book: Book, etag: string | undefined) {
    messages.clear()
    const index = pageBooks().findIndex((shown) => shown.id === book.id)
    const { done: deleted, failure } = await actOnBooks(
      (id) => client.books.delete(id, { ifMatch: etag }),
      [book],
      () => {},
    )
    if (failure instanceof ApiError && failure.status === 412) {
      messages.error(`“${book.title}” was changed meanwhile, so it was not deleted. Open it to see the current version.`)
      return
    }
    if (failure !== undefined) {
      messages.error(describeError(failure), () => void remove(book, etag))
      return
    }
    await forget(book.id)
    reportDeleted(deleted)
    const neighbour = pageBooks()[index] ?? pageBooks()[index - 1]
    if (!neighbour || !table.focusRow(neighbour.id)) home.focus()
  }

  function replace(book: Book) {
    results?.replace(book)
    selection.replace(book)
    render()
  }

  /** A book that is gone: the page fills up from the next one, and a page left empty gives way to the one before. */
  function forget(id: number): Promise<void> {
    const ids = new Set([id])
    results?.forget(ids)
    selection.forget(ids)
    return show()
  }

  addButton.addEventListener('click', () => {
    messages.clear()
    openBookDialog(view, client, undefined, {
      saved: (created) => {
        // Shown first on the page, where the person looks, whatever the order; a new search puts it in its place.
        results?.insert(created, (state.page - 1) * state.size)
        render()
        messages.notice(`Added “${created.title}”.`)
      },
      changed: replace,
      gone: (id) => void forget(id),
      remove: (confirmed, etag) => void remove(confirmed, etag),
    })
  })
  importButton.addEventListener('click', () =>
    openImportDialog(view, client, {
      imported: (text) => void reload().then(() => messages.notice(text)),
      failed: (text) => messages.error(text),
    }),
  )
  exportButton.addEventListener('click', () => void exportAll())

  listenForShortcuts(
    {
      search: () => finder.search.focus(),
      add: canEdit ? () => addButton.click() : undefined,
      undo: canEdit ? () => messages.element.querySelector<HTMLButtonElement>('.notice-action')?.click() : undefined,
      help: () => openShortcutsDialog(view, canEdit),
    },
    signal,
  )
  window.addEventListener('popstate', () => void openAddress(), { signal })
  // Back online: what failed for want of a network is tried again.
  window.addEventListener(
    'online',
    () => {
      messages.element.querySelector<HTMLButtonElement>('[role="alert"] button')?.click()
    },
    { signal },
  )
  // The toolbar's height keeps what gets the focus from hiding under it (`scroll-padding-top`).
  const toolbarSize = new ResizeObserver(() =>
    document.documentElement.style.setProperty('--toolbar-height', `${toolbar.getBoundingClientRect().height}px`),
  )
  toolbarSize.observe(toolbar)
  signal.addEventListener('abort', () => {
    toolbarSize.disconnect()
    results?.close()
    clearTimeout(gathering)
  })

  // The changes are followed from the newest one before the first books are read: none made
  // while they are read goes unseen.
  void client.changes
    .latest({ signal })
    .then(
      (seq) => followChanges(client, seq, heard, signal),
      () => {},
    )
    .finally(() => {
      if (!signal.aborted) void openAddress()
    })
  return view
}
