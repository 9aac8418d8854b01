import { h, uniqueId } from './dom.ts'

export interface FormField<E extends HTMLInputElement | HTMLSelectElement> {
  control: E
  wrapper: HTMLDivElement
  /** Says what is wrong beside the field, or clears it with `''`. */
  say(problem: string): void
}

function wrap<E extends HTMLInputElement | HTMLSelectElement>(label: string, control: E, hint?: string): FormField<E> {
  const id = control.id
  const error = h('p', { id: `${id}-error`, class: 'field-error', role: 'alert' })
  const hintElement = hint === undefined ? null : h('p', { id: `${id}-hint`, class: 'hint' }, hint)
  control.setAttribute('aria-describedby', hintElement ? `${id}-hint ${id}-error` : `${id}-error`)
  return {
    control,
    wrapper: h('div', { class: 'field' }, h('label', { for: id }, label), control, hintElement, error),
    say(problem) {
      error.textContent = problem
      if (problem === '') control.removeAttribute('aria-invalid')
      else control.setAttribute('aria-invalid', 'true')
    },
  }
}

/** A labelled input with its hint and its error message, both tied to it by `aria-describedby`. */
export function inputField(label: string, attributes: Record<string, string | boolean>, hint?: string): FormField<HTMLInputElement> {
  return wrap(label, h('input', { id: uniqueId('field'), autocomplete: 'off', ...attributes }), hint)
}

/** A labelled choice among `options` (value and words), `selected` chosen at first. */
export function selectField(
  label: string,
  options: [value: string, text: string][],
  selected: string,
  hint?: string,
): FormField<HTMLSelectElement> {
  const control = h('select', { id: uniqueId('field') }, ...options.map(([value, text]) => h('option', { value }, text)))
  control.value = selected
  return wrap(label, control, hint)
}
