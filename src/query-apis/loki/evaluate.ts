import type { PortalContext } from '../../context.ts'
import { HOUR_MS } from '../../modules/logs/level-counts.ts'
import { applyBinaryOperator, combineSamples, COMPARISONS } from '../binary-operators.ts'
import { LogqlError, type ArithmeticOp, type Grouping, type LogSelection, type MetricExpr } from './logql.ts'
import { compareLabels, labelsKey, type Labels } from '../samples.ts'
import { compilePipeline, type LogEntry } from './pipeline.ts'
import { countInBuckets, countInHourBuckets, hourlyCountsAnswer, scanLogs, selectionIsExactInSql, STREAM_LABELS } from './log-rows.ts'

/** What a query read, for the `stats` of Loki's answers. */
export interface QueryStats {
  linesScanned: number
  bytesScanned: number
}

export interface Series {
  labels: Labels
  /** one value per evaluation time; undefined where the series has no point */
  values: (number | undefined)[]
}

export type MetricValue = { kind: 'vector'; series: Series[] } | { kind: 'scalar'; values: number[] }

/** The most buckets one range aggregation counts in; a finer query is refused rather than held for minutes. */
const MAX_BUCKETS = 1_000_000

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b)
}

/** Evaluates a metric query at each of `times` (ms). */
export async function evaluateMetric(ctx: PortalContext, projectId: string, expr: MetricExpr, times: number[], stats: QueryStats): Promise<MetricValue> {
  switch (expr.kind) {
    case 'number':
      return { kind: 'scalar', values: times.map(() => expr.value) }
    case 'vector':
      return { kind: 'vector', series: [{ labels: {}, values: times.map(() => expr.value) }] }
    case 'range':
      if (expr.grouping) throw new LogqlError(`unsupported LogQL: grouping on ${expr.op} is not evaluated by the portal; aggregate with sum by (…) instead`)
      return { kind: 'vector', series: await rangeAggregation(ctx, projectId, expr, times, stats) }
    case 'aggregate': {
      // The hourly counts know levels only: they answer a sum that keeps no other stream label.
      const inner =
        expr.expr.kind === 'range' && expr.op === 'sum' && keepsNoStreamLabelButLevel(expr.grouping)
          ? { kind: 'vector' as const, series: await rangeAggregation(ctx, projectId, expr.expr, times, stats, true) }
          : await evaluateMetric(ctx, projectId, expr.expr, times, stats)
      if (inner.kind === 'scalar') throw new LogqlError(`parse error: ${expr.op} expects a vector, got a scalar`)
      return { kind: 'vector', series: aggregate(expr.op, expr.grouping, expr.parameter, inner.series, times.length) }
    }
    case 'binary': {
      const [left, right] = await Promise.all([evaluateMetric(ctx, projectId, expr.left, times, stats), evaluateMetric(ctx, projectId, expr.right, times, stats)])
      return binary(expr.op, expr.bool, left, right, times.length)
    }
  }
}

function keepsNoStreamLabelButLevel(grouping: Grouping | undefined): boolean {
  if (!grouping) return true
  const others = STREAM_LABELS.filter((label) => label !== 'level')
  return grouping.without ? others.every((label) => grouping.labels.includes(label)) : grouping.labels.every((label) => !(others as string[]).includes(label))
}

async function rangeAggregation(
  ctx: PortalContext,
  projectId: string,
  expr: Extract<MetricExpr, { kind: 'range' }>,
  times: number[],
  stats: QueryStats,
  levelsSuffice = false,
): Promise<Series[]> {
  const { rangeMs, selection, op } = expr
  if (!Number.isInteger(rangeMs)) throw new LogqlError(`unsupported LogQL: a range below a millisecond (${rangeMs} ms) is not evaluated by the portal`)
  const at = times.map((t) => t - expr.offsetMs)
  const stepMs = at.length > 1 ? at[1] - at[0] : rangeMs
  // Windows (t − range, t] at every step are unions of whole buckets of b = gcd(range, step), numbered from the origin.
  const bucketMs = gcd(rangeMs, stepMs)
  const originMs = at[0] - rangeMs - bucketMs
  const span = { fromMs: Math.floor(at[0] - rangeMs) + 1, toMs: Math.floor(at[at.length - 1]) + 1 }
  const bucketCount = Math.ceil((at[at.length - 1] - originMs) / bucketMs) + 1
  if (bucketCount > MAX_BUCKETS) throw new LogqlError(`unsupported LogQL: step ${stepMs} ms and range ${rangeMs} ms need ${bucketCount} buckets (at most ${MAX_BUCKETS}); choose a step that divides the range`)
  const counted = op === 'count_over_time' || op === 'rate'
  let buckets: { stream: Labels; bucket: number; count: number }[]
  if (counted && levelsSuffice && hourlyCountsAnswer(selection) && bucketMs % HOUR_MS === 0 && originMs % HOUR_MS === 0) {
    buckets = await countInHourBuckets(ctx, projectId, selection, span, originMs, bucketMs)
  } else if (counted && selectionIsExactInSql(selection)) {
    buckets = await countInBuckets(ctx, projectId, selection, span, originMs, bucketMs)
  } else {
    buckets = await pipelineBuckets(ctx, projectId, selection, span, originMs, bucketMs, counted, stats)
  }
  const bySeries = new Map<string, { labels: Labels; counts: Float64Array }>()
  for (const { stream, bucket, count } of buckets) {
    if (bucket < 0 || bucket >= bucketCount) continue
    const key = labelsKey(stream)
    const series = bySeries.get(key) ?? { labels: stream, counts: new Float64Array(bucketCount) }
    series.counts[bucket] += count
    bySeries.set(key, series)
  }
  const perSecond = op === 'rate' || op === 'bytes_rate' ? 1000 / rangeMs : 1
  const result: Series[] = []
  for (const { labels, counts } of bySeries.values()) {
    const prefix = new Float64Array(bucketCount + 1)
    for (let j = 0; j < bucketCount; j++) prefix[j + 1] = prefix[j] + counts[j]
    const values = at.map((t) => {
      const first = Math.round((t - rangeMs - originMs) / bucketMs)
      const last = Math.round((t - originMs) / bucketMs) - 1
      const total = prefix[Math.min(last, bucketCount - 1) + 1] - prefix[Math.max(first, 0)]
      return total > 0 ? total * perSecond : undefined
    })
    if (values.some((value) => value !== undefined)) result.push({ labels, values })
  }
  return result
}

/** Buckets of lines (or their bytes) that the whole pipeline keeps, per resulting label set. */
async function pipelineBuckets(
  ctx: PortalContext,
  projectId: string,
  selection: LogSelection,
  span: { fromMs: number; toMs: number },
  originMs: number,
  bucketMs: number,
  counted: boolean,
  stats: QueryStats,
) {
  const pipeline = compilePipeline(selection.stages)
  const buckets = new Map<string, { stream: Labels; bucket: number; count: number }>()
  const scanned = await scanLogs(ctx, projectId, selection, span, 'forward', needsMetadata(selection), (entries) => {
    for (const entry of entries) {
      const result = pipeline(entry)
      if (!result) continue
      const bucket = Math.floor((entry.ts - originMs - 1) / bucketMs)
      const key = `${bucket} ${labelsKey(result.labels)}`
      const counts = buckets.get(key) ?? { stream: result.labels, bucket, count: 0 }
      counts.count += counted ? 1 : Buffer.byteLength(result.line)
      buckets.set(key, counts)
    }
    return true
  })
  stats.linesScanned += scanned.linesScanned
  stats.bytesScanned += scanned.bytesScanned
  return [...buckets.values()]
}

/** Whether a stage may read the structured metadata (`fields`): a label filter or line_format. */
function needsMetadata(selection: LogSelection): boolean {
  return selection.stages.some((stage) => stage.kind === 'labels' || stage.kind === 'lineFormat')
}

function groupLabels(labels: Labels, grouping: Grouping | undefined): Labels {
  if (!grouping) return {}
  if (grouping.without) return Object.fromEntries(Object.entries(labels).filter(([name]) => !grouping.labels.includes(name)))
  return Object.fromEntries(grouping.labels.filter((name) => labels[name] !== undefined && labels[name] !== '').map((name) => [name, labels[name]]))
}

function aggregate(op: string, grouping: Grouping | undefined, parameter: number | undefined, series: Series[], steps: number): Series[] {
  const groups = new Map<string, { labels: Labels; members: Series[] }>()
  for (const member of series) {
    const labels = groupLabels(member.labels, grouping)
    const key = labelsKey(labels)
    const group = groups.get(key) ?? { labels, members: [] }
    group.members.push(member)
    groups.set(key, group)
  }
  if (op === 'topk' || op === 'bottomk') {
    const k = parameter ?? 0
    const kept = series.map((member) => ({ labels: member.labels, values: new Array<number | undefined>(steps).fill(undefined) }))
    const index = new Map(series.map((member, i) => [member, i]))
    for (const { members } of groups.values()) {
      for (let step = 0; step < steps; step++) {
        const present = members.filter((member) => member.values[step] !== undefined)
        present.sort((a, b) => (op === 'topk' ? b.values[step]! - a.values[step]! : a.values[step]! - b.values[step]!))
        for (const member of present.slice(0, k)) kept[index.get(member)!].values[step] = member.values[step]
      }
    }
    return kept.filter((member) => member.values.some((value) => value !== undefined))
  }
  const result: Series[] = []
  for (const { labels, members } of groups.values()) {
    const values = Array.from({ length: steps }, (_, step) => {
      const present = members.map((member) => member.values[step]).filter((value): value is number => value !== undefined)
      if (present.length === 0) return undefined
      switch (op) {
        case 'sum':
          return present.reduce((sum, value) => sum + value, 0)
        case 'avg':
          return present.reduce((sum, value) => sum + value, 0) / present.length
        case 'min':
          return Math.min(...present)
        case 'max':
          return Math.max(...present)
        default:
          return present.length
      }
    })
    if (values.some((value) => value !== undefined)) result.push({ labels, values })
  }
  return result
}


function binary(op: ArithmeticOp, bool: boolean, left: MetricValue, right: MetricValue, steps: number): MetricValue {
  if (left.kind === 'scalar' && right.kind === 'scalar') {
    if (COMPARISONS.has(op) && !bool) throw new LogqlError('parse error: comparisons between scalars must use the bool modifier')
    return { kind: 'scalar', values: left.values.map((value, step) => applyBinaryOperator(op, value, right.values[step])) }
  }
  const present = (series: Series[]) => series.filter((member) => member.values.some((value) => value !== undefined))
  if (left.kind === 'scalar' && right.kind === 'vector') {
    return { kind: 'vector', series: present(right.series.map((member) => ({ labels: member.labels, values: member.values.map((value, step) => combineSamples(op, bool, left.values[step], value, left.values[step])) }))) }
  }
  if (left.kind === 'vector' && right.kind === 'scalar') {
    return { kind: 'vector', series: present(left.series.map((member) => ({ labels: member.labels, values: member.values.map((value, step) => combineSamples(op, bool, value, right.values[step], value)) }))) }
  }
  // vector ⊕ vector: one-to-one on identical label sets, as PromQL without on()/ignoring()
  const rights = new Map((right as { series: Series[] }).series.map((member) => [labelsKey(member.labels), member]))
  const series: Series[] = []
  for (const member of (left as { series: Series[] }).series) {
    const other = rights.get(labelsKey(member.labels))
    if (!other) continue
    series.push({ labels: member.labels, values: Array.from({ length: steps }, (_, step) => combineSamples(op, bool, member.values[step], other.values[step], member.values[step])) })
  }
  return { kind: 'vector', series: present(series) }
}

/** The newest (backward) or oldest `limit` entries that the selection keeps in [from, to), with what each pipeline left. */
export async function evaluateLogs(
  ctx: PortalContext,
  projectId: string,
  selection: LogSelection,
  range: { fromMs: number; toMs: number },
  direction: 'backward' | 'forward',
  limit: number,
  stats: QueryStats,
): Promise<{ labels: Labels; entries: { ts: number; line: string }[] }[]> {
  const pipeline = compilePipeline(selection.stages)
  const streams = new Map<string, { labels: Labels; entries: { ts: number; line: string }[] }>()
  let kept = 0
  const scanned = await scanLogs(ctx, projectId, selection, range, direction, needsMetadata(selection), (entries: LogEntry[]) => {
    for (const entry of entries) {
      const result = pipeline(entry)
      if (!result) continue
      const key = labelsKey(result.labels)
      const stream = streams.get(key) ?? { labels: result.labels, entries: [] }
      stream.entries.push({ ts: entry.ts, line: result.line })
      streams.set(key, stream)
      if (++kept >= limit) return false
    }
    return true
    // The first batch is what the answer would be if the database's filters were the whole selection (they are
    // most often nearly so); each further batch reads four times more.
  }, selectionIsExactInSql(selection) ? limit : limit + 10)
  stats.linesScanned += scanned.linesScanned
  stats.bytesScanned += scanned.bytesScanned
  // Streams in label order, descending for a backward query, as Loki lists them.
  const order = direction === 'backward' ? -1 : 1
  return [...streams.values()].sort((a, b) => order * compareLabels(a.labels, b.labels))
}
