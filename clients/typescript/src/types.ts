/** The service's types, named for use, all taken from the types generated from openapi.json. */
import type { components, operations, paths } from './generated/openapi.ts'

type Schemas = components['schemas']

export type Book = Schemas['Book']
export type NewBook = Schemas['NewBook']
export type BookChanges = Schemas['BookChanges']
/** A change of a book's history (docs/api.md#history). */
export type Change = Schemas['Change']
export type TrashedBook = Schemas['TrashedBook']
export type User = Schemas['User']
export type NewUser = Schemas['NewUser']
export type UserChanges = Schemas['UserChanges']
export type Role = User['role']
export type Key = Schemas['Key']
export type NewKey = Schemas['NewKey']
/** A key as its creation answers it: the only time `key` itself is shown. */
export type CreatedKey = Schemas['CreatedKey']

export type Method = 'get' | 'post' | 'put' | 'delete'
/** The routes of the service, as openapi.json describes them. */
export type Route = keyof paths
/** The operation of a route and method; `never` when the service has no such pair. */
export type Operation<R extends Route, M extends Method> = paths[R][M]

type JsonContent<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never
type Answers<O> = O extends { responses: infer Responses } ? Responses : never

/** The envelope's `data` of a successful (200 or 201) answer of an operation. */
export type Data<O> = {
  [Status in keyof Answers<O>]: Status extends 200 | 201 ? (JsonContent<Answers<O>[Status]> extends { data: infer D } ? D : never) : never
}[keyof Answers<O>]

/** The envelope's `data` of one status of an operation. */
export type DataOf<Name extends keyof operations, Status extends keyof Answers<operations[Name]>> =
  JsonContent<Answers<operations[Name]>[Status]> extends { data: infer D } ? D : never

/** The JSON body an operation takes. */
export type JsonBody<O> = O extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never

type QueryNames<Name extends keyof operations> = keyof NonNullable<operations[Name]['parameters']['query']>

/** Query parameters as strings, numbers or booleans, written as the service reads them. */
export type QueryOf<Name extends keyof operations> = { [P in QueryNames<Name>]?: string | number | boolean | undefined }

/** The filters and order of `GET /books` (docs/api.md#finding-books). */
export type FindQuery = Omit<QueryOf<'listBooks'>, 'cursor'>
/** One page of `GET /books`, its position and size chosen. */
export type PageQuery = QueryOf<'listBooks'>
/** The filters and order of `GET /books/export`, and its format. */
export type ExportQuery = QueryOf<'exportBooks'>

export type ImportCheck = DataOf<'importBooks', 200>
export type ImportResult = DataOf<'importBooks', 201> & {
  /** With `skipDuplicates`, on a service that leaves duplicates out: the rows left out, `id` the stored book they repeat (null for an earlier row). */
  duplicates?: ImportCheck['duplicates']
}
/** One problem of an import: a row counted from 1, or none when the file as a whole is at fault. */
export type RowError = ImportCheck['errors'][number]
export type DuplicateRow = ImportCheck['duplicates'][number]
