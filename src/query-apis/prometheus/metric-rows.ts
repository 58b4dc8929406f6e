import type { PortalContext } from '../../context.ts'
import { eventsDb } from '../../modules/read-route.ts'
import type { PerformanceTables } from '../../modules/performance/tables.ts'
import type { LabelMatcher } from './promql.ts'
import { PromqlError } from './promql.ts'

import type { Labels } from '../samples.ts'

/** One series: its labels (`__name__` among them) and samples in time order. */
export interface SampleSeries {
  labels: Labels
  /** OTLP delta temporality: each sample is an increase over its own interval, not a running total */
  delta: boolean
  samples: { t: number; v: number }[]
}

/** The most samples one query loads; a larger one is refused, as Prometheus refuses one over its sample limit. */
export const MAX_SAMPLES = 2_000_000

/** Prometheus' metric and label names: other characters become `_`, and a leading digit gets one before it. */
function prometheusName(name: string): string {
  const replaced = name.replace(/[^a-zA-Z0-9_:]/g, '_')
  return /^[0-9]/.test(replaced) ? `_${replaced}` : replaced
}

function labelName(name: string): string {
  const replaced = name.replace(/[^a-zA-Z0-9_]/g, '_')
  return /^[0-9]/.test(replaced) ? `_${replaced}` : replaced
}

/** A float as Prometheus writes it in a label (`le`): `+Inf`, integers without a dot. */
function formatFloat(value: number): string {
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

export function matcherTest(matcher: LabelMatcher): (value: string) => boolean {
  const { op, value } = matcher
  if (op === '=') return (actual) => actual === value
  if (op === '!=') return (actual) => actual !== value
  let regex: RegExp
  try {
    regex = new RegExp(`^(?:${value})$`)
  } catch (error) {
    throw new PromqlError(`invalid regular expression in matcher ${matcher.name}: ${(error as Error).message}`)
  }
  return op === '=~' ? (actual) => regex.test(actual) : (actual) => !regex.test(actual)
}

function matchesAll(matchers: LabelMatcher[], labels: Labels): boolean {
  return matchers.every((matcher) => matcherTest(matcher)(labels[matcher.name] ?? ''))
}

/** The series names a stored metric gives: the metric itself, or a histogram's `_bucket`, `_count` and `_sum`. */
function seriesNames(metric: string): string[] {
  const name = prometheusName(metric)
  return [name, `${name}_bucket`, `${name}_count`, `${name}_sum`]
}

function performanceEvents(ctx: PortalContext) {
  return eventsDb<PerformanceTables>(ctx, 'performance_events')
}

/** The project's stored metric names whose series a `__name__` matcher selects (every one without such a matcher). */
async function metricsSelected(ctx: PortalContext, projectId: string, matchers: LabelMatcher[], window: { fromMs: number; toMs: number }): Promise<string[]> {
  const rows = await performanceEvents(ctx)
    .selectFrom('performance_events')
    .select('metric')
    .distinct()
    .where('project_id', '=', projectId)
    .where('ts', '>=', Math.ceil(window.fromMs))
    .where('ts', '<', Math.ceil(window.toMs))
    .execute()
  const names = matchers.filter((matcher) => matcher.name === '__name__').map(matcherTest)
  return rows.map((row) => row.metric).filter((metric) => seriesNames(metric).some((name) => names.every((test) => test(name))))
}

/**
 * The series the matchers select over [from, to): each performance event is a sample of `<metric>` labelled
 * with its service (`job`) and attributes, and each histogram point also gives cumulative `<metric>_bucket{le}`,
 * `<metric>_count` and `<metric>_sum` samples.
 */
export async function loadSeries(ctx: PortalContext, projectId: string, matchers: LabelMatcher[], window: { fromMs: number; toMs: number }): Promise<SampleSeries[]> {
  const metrics = await metricsSelected(ctx, projectId, matchers, window)
  if (metrics.length === 0) return []
  const store = ctx.storage.eventsOf('performance_events')
  let query = performanceEvents(ctx)
    .selectFrom('performance_events')
    .select(['ts', 'service', 'metric', 'value', 'data', ...store.dataColumns] as never[])
    .where('project_id', '=', projectId)
    .where('metric', 'in', metrics)
    .where('ts', '>=', Math.ceil(window.fromMs))
    .where('ts', '<', Math.ceil(window.toMs))
  const job = matchers.find((matcher) => matcher.name === 'job' && matcher.op === '=' && matcher.value !== '')
  if (job) query = query.where('service', '=', job.value)
  const rows = (await query.orderBy('ts').limit(MAX_SAMPLES + 1).execute()) as Record<string, unknown>[]
  if (rows.length > MAX_SAMPLES) throw new PromqlError(`query processing would load too many samples into memory (more than ${MAX_SAMPLES}); narrow the selector or the range`)
  const series = new Map<string, SampleSeries>()
  const add = (labels: Labels, delta: boolean, t: number, v: number) => {
    if (!matchesAll(matchers, labels)) return
    const key = JSON.stringify(Object.entries(labels).sort())
    const entry = series.get(key) ?? { labels, delta, samples: [] }
    entry.samples.push({ t, v })
    series.set(key, entry)
  }
  for (const row of rows) {
    const data = store.dataOf(row)
    const t = Number(row.ts)
    const base: Labels = {}
    for (const [key, value] of Object.entries((data.attributes ?? {}) as Record<string, unknown>)) {
      if (value !== null && typeof value !== 'object') base[labelName(key)] = String(value)
    }
    if (row.service !== null && row.service !== undefined) base.job = String(row.service)
    const name = prometheusName(String(row.metric))
    const delta = data.temporality === 'delta'
    if (data.kind === 'histogram' && Array.isArray(data.bucketCounts)) {
      const bounds = Array.isArray(data.explicitBounds) ? (data.explicitBounds as number[]) : []
      let cumulative = 0
      ;(data.bucketCounts as number[]).forEach((count, i) => {
        cumulative += Number(count)
        add({ ...base, __name__: `${name}_bucket`, le: formatFloat(i < bounds.length ? bounds[i] : Infinity) }, delta, t, cumulative)
      })
      add({ ...base, __name__: `${name}_count` }, delta, t, Number(data.count ?? cumulative))
      add({ ...base, __name__: `${name}_sum` }, delta, t, Number(data.sum ?? 0))
      continue
    }
    add({ ...base, __name__: name }, delta, t, Number(row.value))
  }
  return [...series.values()]
}

/** Label names, or the values of one label, over the series that the selectors (any, when none) select. */
export async function seriesLabels(ctx: PortalContext, projectId: string, selectors: LabelMatcher[][], window: { fromMs: number; toMs: number }): Promise<Labels[]> {
  const all = await Promise.all((selectors.length === 0 ? [[]] : selectors).map((matchers) => loadSeries(ctx, projectId, matchers, window)))
  const unique = new Map(all.flat().map((series) => [JSON.stringify(Object.entries(series.labels).sort()), series.labels]))
  return [...unique.values()]
}
