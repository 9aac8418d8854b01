export interface FileCounts {
  tests: number
  passed: number
  failed: number
  cancelled: number
  skipped: number
  todo: number
}

/** The counts of a file with no test; a file that failed as a whole adds one test, failed. */
export const NO_TESTS: Readonly<FileCounts> = { tests: 0, passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0 }

/** A test file's end, as a worker of `npm test` tells it. */
export interface FileEnd {
  file: string
  counts: FileCounts
  durationMs: number
}

/**
 * What a worker sends: that it is ready for a file, what the spec reporter writes of the file as
 * it goes (so that a worker that dies has told what ran up to then), then the file's end; and,
 * when the runner asks of a file that takes too long, what its event loop still waits for.
 */
export type WorkerMessage = 'ready' | { output: string } | { end: FileEnd } | { holding: string[] }

/** What the runner sends: a file to run, or 'holding' to ask what keeps the file from ending. */
export type RunnerMessage = { file: string } | 'holding'
