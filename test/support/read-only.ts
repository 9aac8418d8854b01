import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A command that runs `script` in `sh` within a mount namespace of its own, where the folder `dir`
 * is mounted onto itself read-only and is the working directory; `args` are `$1`, `$2`, … there.
 * Tests run as root, for whom file modes make no folder read-only: a read-only mount does. The
 * folder stays writable for every other process.
 */
export function inReadOnlyFolder(dir: string, script: string, args: string[] = []): [string, string[]] {
  return ['unshare', ['--mount', 'sh', '-c', `mount --bind -o ro "$0" "$0" && cd "$0" && ${script}`, dir, ...args]]
}

let verdict: string | false | undefined

/**
 * Why no folder can be mounted read-only here (that takes root, or a user namespace), or false
 * when one can; under CI=true always false, so the test fails instead of being skipped.
 */
export function skipWithoutReadOnlyMount(): string | false {
  if (process.env.CI === 'true') return false
  if (verdict !== undefined) return verdict
  const dir = mkdtempSync(join(tmpdir(), 'books-read-only-'))
  try {
    const [command, args] = inReadOnlyFolder(dir, '! test -w .')
    const probe = spawnSync(command, args, { encoding: 'utf8' })
    const why = probe.error?.message ?? probe.stderr.trim()
    verdict =
      probe.status === 0
        ? false
        : `SKIPPED: cannot mount a folder read-only here (${why || `exit code ${probe.status}`}); under CI=true this test fails instead`
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return verdict
}
