import type { PortalContext } from '../../context.ts'
import type { Labels } from '../samples.ts'
import { loadSeries, type SampleSeries } from './metric-rows.ts'
import { applyBinaryOperator, combineSamples as combine, COMPARISONS } from '../binary-operators.ts'
import { PromqlError, type BinaryOp, type PromExpr, type RangeFunction, type Selector } from './promql.ts'

/** How far back an instant selector looks for a series' latest sample, as Prometheus' default. */
export const LOOKBACK_MS = 300_000

export interface Series {
  labels: Labels
  values: (number | undefined)[]
}
export type PromValue = { kind: 'vector'; series: Series[] } | { kind: 'scalar'; values: number[] }

const key = (labels: Labels) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
const withoutName = (labels: Labels): Labels => Object.fromEntries(Object.entries(labels).filter(([name]) => name !== '__name__'))

/** The samples a selector needs for evaluations at `times`, looking back `reachMs` before each. */
async function select(ctx: PortalContext, projectId: string, selector: Selector, times: number[], reachMs: number): Promise<SampleSeries[]> {
  const first = times[0] - selector.offsetMs - reachMs
  const last = times[times.length - 1] - selector.offsetMs
  return loadSeries(ctx, projectId, selector.matchers, { fromMs: first + 1, toMs: last + 1 })
}

/** Samples of a series in (from, to], by binary search over its time-ordered samples. */
function window(samples: { t: number; v: number }[], from: number, to: number) {
  let low = 0
  let high = samples.length
  while (low < high) {
    const mid = (low + high) >> 1
    if (samples[mid].t <= from) low = mid + 1
    else high = mid
  }
  const start = low
  high = samples.length
  while (low < high) {
    const mid = (low + high) >> 1
    if (samples[mid].t <= to) low = mid + 1
    else high = mid
  }
  return samples.slice(start, low)
}

/** Prometheus' extrapolated increase (or rate) of a counter over (t − range, t]. */
function extrapolatedIncrease(points: { t: number; v: number }[], t: number, rangeMs: number, isRate: boolean): number | undefined {
  if (points.length < 2) return undefined
  let result = points[points.length - 1].v - points[0].v
  for (let i = 1; i < points.length; i++) if (points[i].v < points[i - 1].v) result += points[i - 1].v
  const rangeStart = t - rangeMs
  let durationToStart = (points[0].t - rangeStart) / 1000
  const durationToEnd = (t - points[points.length - 1].t) / 1000
  const sampledInterval = (points[points.length - 1].t - points[0].t) / 1000
  const averageBetween = sampledInterval / (points.length - 1)
  if (result > 0 && points[0].v >= 0) {
    const durationToZero = sampledInterval * (points[0].v / result)
    if (durationToZero < durationToStart) durationToStart = durationToZero
  }
  const threshold = averageBetween * 1.1
  let extrapolateTo = sampledInterval
  extrapolateTo += durationToStart < threshold ? durationToStart : averageBetween / 2
  extrapolateTo += durationToEnd < threshold ? durationToEnd : averageBetween / 2
  result *= extrapolateTo / sampledInterval
  return isRate ? result / (rangeMs / 1000) : result
}

function overTime(fn: RangeFunction, series: SampleSeries, points: { t: number; v: number }[], t: number, rangeMs: number): number | undefined {
  if (points.length === 0) return undefined
  const values = points.map((point) => point.v)
  switch (fn) {
    case 'rate':
    case 'increase':
      // OTLP delta points each carry their own interval's increase: their sum is the window's.
      if (series.delta) {
        const total = values.reduce((sum, value) => sum + value, 0)
        return fn === 'rate' ? total / (rangeMs / 1000) : total
      }
      return extrapolatedIncrease(points, t, rangeMs, fn === 'rate')
    case 'sum_over_time':
      return values.reduce((sum, value) => sum + value, 0)
    case 'avg_over_time':
      return values.reduce((sum, value) => sum + value, 0) / values.length
    case 'min_over_time':
      return Math.min(...values)
    case 'max_over_time':
      return Math.max(...values)
    case 'count_over_time':
      return values.length
    case 'last_over_time':
      return values[values.length - 1]
  }
}

/** Prometheus' quantile over cumulative buckets (upper bound `le`, count), the last one +Inf. */
function bucketQuantile(q: number, buckets: { le: number; count: number }[]): number {
  if (Number.isNaN(q)) return NaN
  if (q < 0) return -Infinity
  if (q > 1) return Infinity
  buckets.sort((a, b) => a.le - b.le)
  if (buckets.length < 2 || buckets[buckets.length - 1].le !== Infinity) return NaN
  for (let i = 1; i < buckets.length; i++) if (buckets[i].count < buckets[i - 1].count) buckets[i].count = buckets[i - 1].count
  const total = buckets[buckets.length - 1].count
  if (total === 0) return NaN
  let rank = q * total
  let b = buckets.findIndex((bucket) => bucket.count >= rank)
  if (b === buckets.length - 1) return buckets[buckets.length - 2].le
  if (b === 0 && buckets[0].le <= 0) return buckets[0].le
  let start = 0
  let count = buckets[b].count
  if (b > 0) {
    start = buckets[b - 1].le
    count -= buckets[b - 1].count
    rank -= buckets[b - 1].count
  }
  if (b < 0) b = 0
  return start + (buckets[b].le - start) * (rank / count)
}



/** Evaluates PromQL at each of `times` (ms). */
export async function evaluatePromql(ctx: PortalContext, projectId: string, expr: PromExpr, times: number[]): Promise<PromValue> {
  switch (expr.kind) {
    case 'number':
      return { kind: 'scalar', values: times.map(() => expr.value) }
    case 'negate': {
      const inner = await evaluatePromql(ctx, projectId, expr.expr, times)
      if (inner.kind === 'scalar') return { kind: 'scalar', values: inner.values.map((value) => -value) }
      return { kind: 'vector', series: inner.series.map((member) => ({ labels: withoutName(member.labels), values: member.values.map((value) => (value === undefined ? undefined : -value)) })) }
    }
    case 'selector': {
      const loaded = await select(ctx, projectId, expr.selector, times, LOOKBACK_MS)
      const series = loaded.map((member) => ({
        labels: member.labels,
        values: times.map((t) => {
          const points = window(member.samples, t - expr.selector.offsetMs - LOOKBACK_MS, t - expr.selector.offsetMs)
          return points.length === 0 ? undefined : points[points.length - 1].v
        }),
      }))
      return { kind: 'vector', series: series.filter((member) => member.values.some((value) => value !== undefined)) }
    }
    case 'range': {
      const loaded = await select(ctx, projectId, expr.selector, times, expr.rangeMs)
      const series = loaded.map((member) => ({
        labels: withoutName(member.labels),
        values: times.map((t) => {
          const at = t - expr.selector.offsetMs
          return overTime(expr.fn, member, window(member.samples, at - expr.rangeMs, at), at, expr.rangeMs)
        }),
      }))
      return { kind: 'vector', series: series.filter((member) => member.values.some((value) => value !== undefined)) }
    }
    case 'histogramQuantile': {
      const [quantile, buckets] = await Promise.all([evaluatePromql(ctx, projectId, expr.quantile, times), evaluatePromql(ctx, projectId, expr.buckets, times)])
      if (quantile.kind !== 'scalar' || buckets.kind !== 'vector') throw new PromqlError('histogram_quantile takes a scalar and a vector of buckets')
      const groups = new Map<string, { labels: Labels; members: { le: number; values: (number | undefined)[] }[] }>()
      for (const member of buckets.series) {
        const le = member.labels.le
        if (le === undefined) continue
        const labels = Object.fromEntries(Object.entries(withoutName(member.labels)).filter(([name]) => name !== 'le'))
        const group = groups.get(key(labels)) ?? { labels, members: [] }
        group.members.push({ le: le === '+Inf' ? Infinity : Number(le), values: member.values })
        groups.set(key(labels), group)
      }
      const series = [...groups.values()].map(({ labels, members }) => ({
        labels,
        values: times.map((_, step) => {
          const present = members.filter((member) => member.values[step] !== undefined).map((member) => ({ le: member.le, count: member.values[step]! }))
          return present.length === 0 ? undefined : bucketQuantile(quantile.values[step], present)
        }),
      }))
      return { kind: 'vector', series: series.filter((member) => member.values.some((value) => value !== undefined)) }
    }
    case 'aggregate':
      return aggregate(ctx, projectId, expr, times)
    case 'binary': {
      const [left, right] = await Promise.all([evaluatePromql(ctx, projectId, expr.left, times), evaluatePromql(ctx, projectId, expr.right, times)])
      return binary(expr.op, expr.bool, left, right, times.length)
    }
  }
}

async function aggregate(ctx: PortalContext, projectId: string, expr: Extract<PromExpr, { kind: 'aggregate' }>, times: number[]): Promise<PromValue> {
  const inner = await evaluatePromql(ctx, projectId, expr.expr, times)
  if (inner.kind === 'scalar') throw new PromqlError(`expected type instant vector in aggregation expression, got scalar`)
  const grouped = (labels: Labels): Labels => {
    if (expr.by) return Object.fromEntries(expr.by.filter((name) => labels[name] !== undefined).map((name) => [name, labels[name]]))
    if (expr.without) return Object.fromEntries(Object.entries(withoutName(labels)).filter(([name]) => !expr.without!.includes(name)))
    return {}
  }
  const groups = new Map<string, { labels: Labels; members: Series[] }>()
  for (const member of inner.series) {
    const labels = grouped(member.labels)
    const group = groups.get(key(labels)) ?? { labels, members: [] }
    group.members.push(member)
    groups.set(key(labels), group)
  }
  if (expr.op === 'topk' || expr.op === 'bottomk') {
    const parameter = expr.parameter ? await evaluatePromql(ctx, projectId, expr.parameter, times) : undefined
    if (!parameter || parameter.kind !== 'scalar') throw new PromqlError(`${expr.op} takes a scalar parameter`)
    const kept = new Map<Series, (number | undefined)[]>()
    for (const { members } of groups.values()) {
      times.forEach((_, step) => {
        const present = members.filter((member) => member.values[step] !== undefined)
        present.sort((a, b) => (expr.op === 'topk' ? b.values[step]! - a.values[step]! : a.values[step]! - b.values[step]!))
        for (const member of present.slice(0, parameter.values[step])) {
          const values = kept.get(member) ?? new Array<number | undefined>(times.length).fill(undefined)
          values[step] = member.values[step]
          kept.set(member, values)
        }
      })
    }
    return { kind: 'vector', series: [...kept].map(([member, values]) => ({ labels: member.labels, values })) }
  }
  const series = [...groups.values()].map(({ labels, members }) => ({
    labels,
    values: times.map((_, step) => {
      const present = members.map((member) => member.values[step]).filter((value): value is number => value !== undefined)
      if (present.length === 0) return undefined
      if (expr.op === 'sum') return present.reduce((sum, value) => sum + value, 0)
      if (expr.op === 'avg') return present.reduce((sum, value) => sum + value, 0) / present.length
      if (expr.op === 'min') return Math.min(...present)
      if (expr.op === 'max') return Math.max(...present)
      return present.length
    }),
  }))
  return { kind: 'vector', series: series.filter((member) => member.values.some((value) => value !== undefined)) }
}


function binary(op: BinaryOp, bool: boolean, left: PromValue, right: PromValue, steps: number): PromValue {
  if (left.kind === 'scalar' && right.kind === 'scalar') {
    if (COMPARISONS.has(op) && !bool) throw new PromqlError('comparisons between scalars must use BOOL modifier')
    return { kind: 'scalar', values: left.values.map((value, step) => applyBinaryOperator(op, value, right.values[step])) }
  }
  const present = (series: Series[]) => series.filter((member) => member.values.some((value) => value !== undefined))
  // Arithmetic drops the metric name; a filtering comparison keeps the series as it was.
  const labelsAfter = (labels: Labels) => (COMPARISONS.has(op) && !bool ? labels : withoutName(labels))
  if (left.kind === 'scalar' && right.kind === 'vector') {
    return { kind: 'vector', series: present(right.series.map((member) => ({ labels: labelsAfter(member.labels), values: member.values.map((value, step) => combine(op, bool, left.values[step], value, value)) }))) }
  }
  if (left.kind === 'vector' && right.kind === 'scalar') {
    return { kind: 'vector', series: present(left.series.map((member) => ({ labels: labelsAfter(member.labels), values: member.values.map((value, step) => combine(op, bool, value, right.values[step], value)) }))) }
  }
  const rights = new Map((right as { series: Series[] }).series.map((member) => [key(withoutName(member.labels)), member]))
  const series: Series[] = []
  for (const member of (left as { series: Series[] }).series) {
    const other = rights.get(key(withoutName(member.labels)))
    if (!other) continue
    series.push({ labels: labelsAfter(member.labels), values: Array.from({ length: steps }, (_, step) => combine(op, bool, member.values[step], other.values[step], member.values[step])) })
  }
  return { kind: 'vector', series: present(series) }
}
