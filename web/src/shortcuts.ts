import { h, uniqueId } from './dom.ts'
import { openModal } from './modal.ts'

export interface ShortcutActions {
  search: () => void
  /** Absent for a role that may not add books. */
  add: (() => void) | undefined
  /** Absent for a role that may not change books. */
  undo: (() => void) | undefined
  help: () => void
}

/** The keys, what they do, and whether only a role that changes books has them. */
const SHORTCUTS: [keys: string[], action: string, editing: boolean][] = [
  [['/'], 'Go to the search', false],
  [['n'], 'Add a book', true],
  [['u'], 'Undo the last deletion or edit, while its “Undo” shows', true],
  [['↑', '↓'], 'Move to the row above or below, in the table', false],
  [['Esc'], 'Close a dialog', false],
  [['?'], 'Show these shortcuts', false],
]

const NOT_TYPED = ['checkbox', 'radio', 'button', 'submit', 'reset', 'file']

/** True when a key goes to what has the focus (a field, a list), not to the page. */
function typing(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable ||
      target instanceof HTMLTextAreaElement ||
      target instanceof HTMLSelectElement ||
      (target instanceof HTMLInputElement && !NOT_TYPED.includes(target.type)))
  )
}

/**
 * The page's single-key shortcuts: never while the person types in a field, holds a modifier
 * key, or has a dialog open (Escape closes dialogs by itself).
 */
export function listenForShortcuts(actions: ShortcutActions, signal: AbortSignal): void {
  document.addEventListener(
    'keydown',
    (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target) || document.querySelector('dialog[open]')) return
      const action = new Map([
        ['/', actions.search],
        ['n', actions.add],
        ['u', actions.undo],
        ['?', actions.help],
      ]).get(event.key)
      if (!action) return
      // "/" would otherwise start the browser's quick find, or be typed into the search.
      event.preventDefault()
      action()
    },
    { signal },
  )
}

/** The dialog that lists the shortcuts; those that change books only for a role that may. */
export function openShortcutsDialog(host: HTMLElement, canEdit: boolean): void {
  const headingId = uniqueId('shortcuts-heading')
  const close = h('button', { type: 'button' }, 'Close')
  const dialog = openModal(
    host,
    headingId,
    h('h2', { id: headingId }, 'Keyboard shortcuts'),
    h(
      'dl',
      { class: 'shortcuts' },
      ...SHORTCUTS.filter(([, , editing]) => canEdit || !editing).flatMap(([keys, action]) => [
        h('dt', {}, ...keys.flatMap((key, index) => [index > 0 ? ' ' : null, h('kbd', {}, key)])),
        h('dd', {}, action),
      ]),
    ),
    h('div', { class: 'buttons' }, close),
  )
  close.addEventListener('click', () => dialog.close())
  close.focus()
}
