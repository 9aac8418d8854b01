export type Child = Node | string | number | null | undefined | false

/**
 * An element with attributes and children. Strings become text nodes, never markup: a title
 * such as `<img src=x onerror=…>` shows as written.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue
    element.setAttribute(name, value === true ? '' : value)
  }
  append(element, children)
  return element
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

/** Text only a screen reader reads, such as the title in a row's "Edit <title>" button. */
export function hidden(text: string): HTMLSpanElement {
  return h('span', { class: 'visually-hidden' }, text)
}

let counter = 0
/** An id unique on the page, for `for`, `aria-describedby` and `aria-labelledby`. */
export function uniqueId(prefix: string): string {
  counter += 1
  return `${prefix}-${counter}`
}
