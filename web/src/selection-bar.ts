import { h } from './dom.ts'
import { countOf } from './numbers.ts'

export interface SelectionBarEvents {
  selectAll: () => void
  exportSelected: () => void
  /** Absent for a role that may not delete: the bar then has no "Delete selected". */
  deleteSelected?: () => void
  clear: () => void
}

export interface SelectionBar {
  element: HTMLElement
  /**
   * `matching`: how many books the search finds, when "Select all N matching" would add some;
   * `filtered` says whether they are a search's or the whole catalogue.
   */
  show(selected: number, matching: number | undefined, filtered: boolean): void
  /** While a long action runs: its progress in words, and no other action meanwhile. */
  busy(text: string | undefined): void
}

/** What can be done with the selected books, shown while there are some. */
export function createSelectionBar(events: SelectionBarEvents): SelectionBar {
  const count = h('p', { class: 'selected-count', role: 'status' })
  const selectAll = h('button', { type: 'button' })
  const exportSelected = h('button', { type: 'button' }, 'Export selected')
  const deleteSelected = events.deleteSelected && h('button', { type: 'button', class: 'danger' }, 'Delete selected')
  if (deleteSelected && events.deleteSelected) deleteSelected.addEventListener('click', events.deleteSelected)
  const clear = h('button', { type: 'button' }, 'Clear selection')
  const buttons = [selectAll, exportSelected, ...(deleteSelected ? [deleteSelected] : []), clear]
  const element = h('div', { class: 'selection-bar', hidden: true }, count, h('div', { class: 'selection-actions' }, ...buttons))
  selectAll.addEventListener('click', events.selectAll)
  exportSelected.addEventListener('click', events.exportSelected)
  clear.addEventListener('click', events.clear)
  let said = ''
  /** The progress of the long action under way: what the bar says until it ends, whatever changes meanwhile. */
  let progress: string | undefined

  return {
    element,
    show(selected, matching, filtered) {
      element.hidden = selected === 0 && progress === undefined
      said = selected === 0 ? '' : `${countOf(selected, 'book')} selected`
      count.textContent = progress ?? said
      selectAll.hidden = matching === undefined
      if (matching !== undefined) selectAll.textContent = `Select all ${countOf(matching, filtered ? 'matching book' : 'book')}`
    },
    busy(text) {
      progress = text
      count.textContent = text ?? said
      for (const button of buttons) button.disabled = text !== undefined
    },
  }
}
