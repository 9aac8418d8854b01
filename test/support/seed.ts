import { randomInt } from 'node:crypto'

/**
 * The seed of a test's random inputs: `TEST_SEED` when set, so a failed run can be repeated,
 * otherwise a new one. The test's diagnostics print it, so a failure always shows it.
 */
export function testSeed(t: { diagnostic(message: string): void }): number {
  const given = process.env.TEST_SEED
  const seed = given === undefined || given === '' ? randomInt(2 ** 31) : Number(given)
  t.diagnostic(`random inputs from seed ${seed}: TEST_SEED=${seed} repeats them`)
  return seed
}

/** A small deterministic generator (mulberry32): `next(min, max)` is an integer from min up to, not including, max. */
export function seededRandom(seed: number): (min: number, max: number) => number {
  let state = seed >>> 0
  return (min, max) => {
    state = (state + 0x6d2b79f5) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 15), z | 1)
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61)
    const unit = ((z ^ (z >>> 14)) >>> 0) / 2 ** 32
    return min + Math.floor(unit * (max - min))
  }
}
