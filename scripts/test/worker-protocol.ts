export interface FileCounts {
  tests: number
  passed: number
  failed: number
  cancelled: number
  skipped: number
  todo: number
}

/** A test file's end, as a worker of `npm test` tells it. */
export interface FileEnd {
  file: string
  counts: FileCounts
  durationMs: number
}

/**
 * What a worker sends: that it is ready for a file, what the spec reporter writes of the file as
 * it goes (so that a worker that dies has told what ran up to then), then the file's end.
 */
export type WorkerMessage = 'ready' | { output: string } | { end: FileEnd }
