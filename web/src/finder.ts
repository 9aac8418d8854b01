import { TEXT_MAX_LENGTH } from './address.ts'
import { yearProblem } from './book-rules.ts'
import { h, uniqueId } from './dom.ts'
import type { FindQuery } from './find-query.ts'

export type Filters = Omit<FindQuery, 'sort'>

export interface Finder {
  element: HTMLFormElement
  search: HTMLInputElement
  /** The filters as typed, or undefined when one is wrong: each wrong field then says why, beside it. */
  read(): Filters | undefined
  /** Shows the filters of a query read from the address, clearing what was said about the fields. */
  fill(filters: Filters): void
}

function field(label: string, attributes: Record<string, string>) {
  const id = uniqueId('filter')
  const input = h('input', { id, autocomplete: 'off', ...attributes })
  const error = h('p', { id: `${id}-error`, class: 'field-error', role: 'alert' })
  input.setAttribute('aria-describedby', error.id)
  const say = (problem: string) => {
    error.textContent = problem
    input.toggleAttribute('aria-invalid', problem !== '')
  }
  return { input, say, wrapper: h('div', { class: 'field' }, h('label', { for: id }, label), input, error) }
}

/**
 * "Search", and the filters by author and years: `q`, `author`, `year_from`, `year_to` of the
 * API's "Finding books". On a narrow screen the filters fold behind a "Filters" button, which
 * says how many are set, so that the toolbar keeps to two lines.
 */
export function createFinder(changed: () => void): Finder {
  const text = { type: 'text', spellcheck: 'false', maxlength: String(TEXT_MAX_LENGTH) }
  const search = field('Search', { ...text, type: 'search', placeholder: 'Words from a title or an author' })
  const author = field('Filter by author', text)
  const yearFrom = field('From year', { inputmode: 'numeric', class: 'year' })
  const yearTo = field('To year', { inputmode: 'numeric', class: 'year' })
  const filtersId = uniqueId('filters')
  const filters = h('div', { id: filtersId, class: 'filters' }, author.wrapper, yearFrom.wrapper, yearTo.wrapper)
  const toggle = h('button', { type: 'button', class: 'filters-toggle', 'aria-expanded': 'false', 'aria-controls': filtersId }, 'Filters')
  const element = h('form', { role: 'search', class: 'finder', novalidate: true }, search.wrapper, toggle, filters)

  const unfold = (open: boolean) => {
    filters.classList.toggle('open', open)
    toggle.setAttribute('aria-expanded', String(open))
  }
  const countFilters = () => {
    const set = [author, yearFrom, yearTo].filter(({ input }) => input.value.trim() !== '').length
    toggle.textContent = set === 0 ? 'Filters' : `Filters (${set})`
  }
  toggle.addEventListener('click', () => unfold(!filters.classList.contains('open')))
  element.addEventListener('input', () => {
    countFilters()
    changed()
  })
  element.addEventListener('submit', (event) => {
    event.preventDefault()
    changed()
  })

  return {
    element,
    search: search.input,
    read() {
      const problems = [yearFrom, yearTo].map(({ input, say }) => {
        const problem = input.value.trim() === '' ? undefined : yearProblem(input.value)
        say(problem?.replace('Year', 'The year') ?? '')
        return problem
      })
      let wrong = problems.some((problem) => problem !== undefined)
      if (!wrong && yearFrom.input.value.trim() !== '' && yearTo.input.value.trim() !== '') {
        if (Number(yearFrom.input.value) > Number(yearTo.input.value)) {
          yearTo.say('The “To year” must not be before the “From year”.')
          wrong = true
        }
      }
      if (wrong) {
        unfold(true)
        return undefined
      }
      return { q: search.input.value, author: author.input.value, yearFrom: yearFrom.input.value, yearTo: yearTo.input.value }
    },
    fill(values) {
      search.input.value = values.q
      author.input.value = values.author
      yearFrom.input.value = values.yearFrom
      yearTo.input.value = values.yearTo
      for (const { say } of [yearFrom, yearTo]) say('')
      countFilters()
    },
  }
}
