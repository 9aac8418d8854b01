/** A typed client of the book catalogue service: docs/client.md. */
export { BookCatalogue, type ClientOptions } from './client.ts'
export { ApiError, ConnectionError } from './errors.ts'
export type { Books, BookVersion } from './books.ts'
export type { Keys, Users } from './accounts.ts'
export { Paged, type Page } from './pages.ts'
export { formatOfName, IMPORT_TYPES, type ImportFormat, type ImportOptions } from './transfer.ts'
export type { Progress, UploadBody } from './upload.ts'
export type * from './types.ts'
