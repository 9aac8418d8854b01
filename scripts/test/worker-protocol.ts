/** What a worker of `npm test` answers for each test file it ran. */
export interface FileDone {
  file: string
  /** What the spec reporter wrote for the file, its summary included. */
  output: string
  counts: { tests: number; passed: number; failed: number; cancelled: number; skipped: number; todo: number }
  durationMs: number
}
