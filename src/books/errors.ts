import { Refusal } from '../errors.ts'

/** No book has that id, or the id is not one. */
export class BookNotFound extends Refusal {
  constructor() {
    super(404, 'Book not found')
  }
}

/** A book, a change or a query breaks the catalogue's rules. */
export class InvalidInput extends Refusal {
  constructor() {
    super(400, 'Invalid input')
  }
}

/** The book is no longer in the state the writer last saw (`If-Match`): nothing was changed. */
export class PreconditionFailed extends Refusal {
  constructor() {
    super(412, 'Precondition failed')
  }
}
