/** A book as the interface shows it. */
export interface Book {
  id: number
  title: string
  author: string
  year: number
}

/** A book to store: the store assigns its id. */
export type NewBook = Omit<Book, 'id'>

/** What an update changes: the members given replace the stored ones. */
export type BookChanges = Partial<NewBook>

/** A book with the revision that its ETag names; every write that changes it raises the revision. */
export interface StoredBook extends Book {
  revision: number
}
