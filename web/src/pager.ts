import { PAGE_SIZES } from './address.ts'
import { h, hidden, uniqueId } from './dom.ts'
import { formatNumber } from './numbers.ts'

export interface PagerEvents {
  go(page: number): void
  resize(size: number): void
}

export interface Pager {
  element: HTMLElement
  show(page: number, pageCount: number, size: number): void
}

/** First, Previous, a page number to type, Next, Last, and how many books a page holds. */
export function createPager(events: PagerEvents): Pager {
  // Named "First page"…, which holds the word shown; the arrows are only drawn.
  const arrow = (text: string) => h('span', { 'aria-hidden': 'true' }, text)
  const first = h('button', { type: 'button' }, arrow('« '), 'First', hidden(' page'))
  const previous = h('button', { type: 'button' }, arrow('‹ '), 'Previous', hidden(' page'))
  const next = h('button', { type: 'button' }, 'Next', hidden(' page'), arrow(' ›'))
  const last = h('button', { type: 'button' }, 'Last', hidden(' page'), arrow(' »'))
  const pageId = uniqueId('page')
  const pageInput = h('input', { id: pageId, class: 'page-number', inputmode: 'numeric', autocomplete: 'off', size: '5' })
  const of = h('span', { class: 'page-count' })
  const sizeId = uniqueId('size')
  const sizeSelect = h('select', { id: sizeId }, ...PAGE_SIZES.map((size) => h('option', { value: String(size) }, String(size))))
  const pages = h('div', { class: 'pages' }, first, previous, h('label', { for: pageId }, 'Page'), pageInput, of, next, last)
  const element = h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    pages,
    h('div', { class: 'page-size' }, h('label', { for: sizeId }, 'Books per page'), sizeSelect),
  )
  let current = 1
  let count = 1

  first.addEventListener('click', () => events.go(1))
  previous.addEventListener('click', () => events.go(current - 1))
  next.addEventListener('click', () => events.go(current + 1))
  last.addEventListener('click', () => events.go(count))
  pageInput.addEventListener('change', () => {
    // Digits as the reader writes them: "1,234", "1.234" and "1 234" are the same page.
    const digits = pageInput.value.replace(/[\s,.'’]/g, '')
    if (!/^[1-9]\d{0,14}$/.test(digits)) {
      pageInput.value = String(current)
      return
    }
    events.go(Math.min(Number(digits), count))
  })
  sizeSelect.addEventListener('change', () => events.resize(Number(sizeSelect.value)))

  return {
    element,
    show(page, pageCount, size) {
      current = page
      count = pageCount
      pageInput.value = String(page)
      of.textContent = `of ${formatNumber(pageCount)}`
      sizeSelect.value = String(size)
      const focused = document.activeElement
      first.disabled = previous.disabled = page <= 1
      next.disabled = last.disabled = page >= pageCount
      // One page needs no way to others; the page size stays, to show more or fewer at once.
      pages.hidden = pageCount === 1 && page === 1
      // A button that no longer applies (Next on the last page) would drop the focus to the page's start.
      if (focused instanceof HTMLButtonElement && focused.disabled && element.contains(focused)) pageInput.focus()
    },
  }
}
