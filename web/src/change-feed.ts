import type { BookCatalogue, Change } from 'book-catalogue-client'

/** How long to wait before following again after a failure, at first. */
const RECONNECT_MS = 1000
/** The longest wait between attempts while the service cannot be reached. */
const LONGEST_WAIT_MS = 15_000

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/**
 * Calls `changed` with every change of every book after `seq`, in order, as it happens, until
 * `signal` aborts. The client opens the stream again when it ends (the service restarts, the
 * token expires), where it left off; when following fails (the service cannot be reached, the
 * token is refused), it starts again after a wait that grows while it keeps failing, with the
 * session's token of the moment, after the last change given, so that none is missed nor given
 * twice. A reading in the background: a refused token is waited out, while the session is
 * renewed or the person signs in again for what they do, not a reason to ask for the password.
 */
export function followChanges(client: BookCatalogue, seq: number, changed: (change: Change) => void, signal: AbortSignal): void {
  let after = seq
  let wait = RECONNECT_MS
  void (async () => {
    while (!signal.aborted) {
      try {
        for await (const change of client.changes.follow({ since: after, signal, background: true })) {
          wait = RECONNECT_MS
          after = change.seq
          changed(change)
        }
      } catch {
        if (signal.aborted) return
        wait = Math.min(wait * 2, LONGEST_WAIT_MS)
      }
      await sleep(wait, signal)
    }
  })()
}
