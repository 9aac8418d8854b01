import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client'
import { SeriesHistogram } from '../../src/observability/series-histogram.ts'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const LABELS = ['method', 'status'] as const

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The same observations through prom-client's own Histogram and Counter, and through SeriesHistogram. */
function bothWays(observations: [string, string, number][]) {
  const theirs = new Registry()
  const histogram = new Histogram({ name: 'd_seconds', help: 'h', labelNames: LABELS, buckets: BUCKETS, registers: [theirs] })
  const counter = new Counter({ name: 'd_total', help: 'c', labelNames: LABELS, registers: [theirs] })
  const ours = new Registry()
  const series = new SeriesHistogram({ name: 'd_seconds', help: 'h', labelNames: LABELS, buckets: BUCKETS })
  ours.registerMetric(series.histogram)
  ours.registerMetric(series.counter('d_total', 'c'))
  for (const [method, status, value] of observations) {
    histogram.observe({ method, status }, value)
    counter.inc({ method, status })
    series.observe([method, status], value)
  }
  return { theirs, ours }
}

describe('SeriesHistogram', () => {
  it("writes the exposition prom-client's Histogram and Counter write for the same observations", async () => {
    const seed = Date.now()
    const next = random(seed)
    // Bounds themselves included: a value equal to a bound counts in that bound's bucket.
    const values = [...BUCKETS, 0, 5]
    const observations = Array.from({ length: 500 }, (): [string, string, number] => [
      next() < 0.5 ? 'GET' : 'POST',
      String(200 + Math.floor(next() * 3)),
      next() < 0.3 ? values[Math.floor(next() * values.length)]! : next() * 2,
    ])
    const { theirs, ours } = bothWays(observations)
    assert.equal(await ours.metrics(), await theirs.metrics(), `seed ${seed}`)
  })

  it("sums the workers of a cluster as prom-client's own do", async () => {
    const a = bothWays([['GET', '200', 0.005]])
    const b = bothWays([
      ['GET', '200', 0.5],
      ['POST', '201', 2],
    ])
    const sum = async (x: Registry, y: Registry) =>
      AggregatorRegistry.aggregate([await x.getMetricsAsJSON(), await y.getMetricsAsJSON()]).metrics()
    assert.equal(await sum(a.ours, b.ours), await sum(a.theirs, b.theirs))
  })
})
