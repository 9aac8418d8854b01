import type { Metric, MetricValueWithName } from 'prom-client'

interface Series {
  labels: Record<string, string>
  /** Observations per bucket, not cumulative; the last is above every bound. */
  counts: number[]
  sum: number
  count: number
}

type Values = MetricValueWithName<string>[]
type SeriesTree = Map<string, SeriesTree | Series>

/**
 * A histogram, and the counter of its observations, for prom-client's registry (which writes
 * the exposition and sums the workers of a cluster). prom-client's own validates the labels,
 * hashes them into a key and looks up the bucket by its bound as text at every observation, of
 * which every request makes several. Here a series is found a label value at a time, and the
 * bucket by index (the cost of each is in docs/performance.md).
 */
export class SeriesHistogram {
  readonly #name: string
  readonly #help: string
  readonly #labelNames: readonly string[]
  readonly #bounds: readonly number[]
  /** The series by their first label's value, then the next's, and so on. */
  #tree: SeriesTree = new Map()
  #series: Series[] = []

  /** The histogram, as prom-client's Histogram reports itself. */
  readonly histogram: Metric

  constructor(options: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[] }) {
    this.#name = options.name
    this.#help = options.help
    this.#labelNames = options.labelNames
    this.#bounds = [...options.buckets].sort((a, b) => a - b)
    this.histogram = this.#metric('histogram', () => this.#histogramValues())
  }

  /** Records `value` under `labelValues`, given in the order of the label names. */
  observe(labelValues: readonly string[], value: number): void {
    const series = this.#seriesOf(labelValues)
    let bucket = 0
    while (bucket < this.#bounds.length && value > this.#bounds[bucket]!) bucket++
    series.counts[bucket]!++
    series.sum += value
    series.count++
  }

  /** The series of `labelValues`, found a label at a time, so that finding one makes no key. */
  #seriesOf(labelValues: readonly string[]): Series {
    let level: SeriesTree = this.#tree
    const last = labelValues.length - 1
    for (let i = 0; i < last; i++) {
      let next = level.get(labelValues[i]!) as SeriesTree | undefined
      if (next === undefined) level.set(labelValues[i]!, (next = new Map()))
      level = next
    }
    let series = level.get(labelValues[last]!) as Series | undefined
    if (series === undefined) {
      const labels = Object.fromEntries(this.#labelNames.map((name, i) => [name, labelValues[i]!]))
      series = { labels, counts: Array<number>(this.#bounds.length + 1).fill(0), sum: 0, count: 0 }
      level.set(labelValues[last]!, series)
      this.#series.push(series)
    }
    return series
  }

  #histogramValues(): Values {
    const values: Values = []
    for (const { labels, counts, sum, count } of this.#series) {
      let cumulative = 0
      this.#bounds.forEach((bound, i) => {
        cumulative += counts[i]!
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${this.#name}_bucket` })
      })
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.#name}_bucket` })
      values.push({ labels, value: sum, metricName: `${this.#name}_sum` })
      values.push({ labels, value: count, metricName: `${this.#name}_count` })
    }
    return values
  }

  /** A counter of the observations of each series, as prom-client's Counter reports itself. */
  counter(name: string, help: string): Metric {
    return this.#metric('counter', () => this.#series.map(({ labels, count }) => ({ labels, value: count })), name, help)
  }

  #metric(type: 'histogram' | 'counter', values: () => Values, name = this.#name, help = this.#help): Metric {
    // The members prom-client's registry reads of a metric; its Metric class has more.
    const metric = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {
        this.#tree = new Map()
        this.#series = []
      },
    }
    return metric as unknown as Metric
  }
}
