/** The frames of where an error was made, as its stack lists them. */
export function stackFrames(err: unknown): number {
  return ((err as Error).stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length
}
