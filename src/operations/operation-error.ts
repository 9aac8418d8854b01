/** Why an operator's command refused or failed, in one line; the store is as it was before. */
export class OperationError extends Error {}

/** The message of an error from node:sqlite or node:fs, for an operator. */
export function reason(err: unknown): string {
  return (err as Error).message ?? String(err)
}
