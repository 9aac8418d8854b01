export interface Envelope<T> {
  status: number
  message: string
  data: T
}

export function envelope<T>(status: number, message: string, data: T): Envelope<T> {
  return { status, message, data }
}
