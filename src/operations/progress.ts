const MIB = 2 ** 20

export function mebibytes(bytes: number): string {
  return (bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)
}

/**
 * Says how far a copy of `totalBytes` has come, every `everyMs` until the returned function is
 * called: a copy that ends within the first interval says nothing.
 */
export function reportProgress(
  label: string,
  done: () => number,
  totalBytes: number,
  say: (line: string) => void,
  everyMs = 1000,
): () => void {
  const timer = setInterval(() => {
    const bytes = Math.min(done(), totalBytes)
    const percent = totalBytes === 0 ? 100 : Math.floor((bytes / totalBytes) * 100)
    say(`${label}: ${mebibytes(bytes)} of ${mebibytes(totalBytes)} MiB (${percent} %)`)
  }, everyMs)
  return () => clearInterval(timer)
}
