import { attributes, enumNumber, int64, isoTime, nanosToMs, serviceNameOf, type KeyValue, type Resource, type Scope } from './values.ts'
import { emptyTranslation, isMessage, listAt, requireMessage, translateItem, type Translation } from './translation.ts'

interface NumberDataPoint {
  attributes?: KeyValue[] | null
  startTimeUnixNano?: unknown
  timeUnixNano?: unknown
  asDouble?: number | null
  asInt?: unknown
}

interface HistogramDataPoint {
  attributes?: KeyValue[] | null
  startTimeUnixNano?: unknown
  timeUnixNano?: unknown
  count?: unknown
  sum?: number | null
  min?: number | null
  max?: number | null
  bucketCounts?: unknown[] | null
  explicitBounds?: number[] | null
}

interface Buckets {
  offset?: number | null
  bucketCounts?: unknown[] | null
}

interface ExponentialHistogramDataPoint extends Omit<HistogramDataPoint, 'bucketCounts' | 'explicitBounds'> {
  scale?: number | null
  zeroCount?: unknown
  positive?: Buckets | null
  negative?: Buckets | null
}

interface SummaryDataPoint {
  attributes?: KeyValue[] | null
  startTimeUnixNano?: unknown
  timeUnixNano?: unknown
  count?: unknown
  sum?: number | null
  quantileValues?: { quantile?: number | null; value?: number | null }[] | null
}

interface Metric {
  name?: string | null
  unit?: string | null
  gauge?: { dataPoints?: NumberDataPoint[] | null } | null
  sum?: { dataPoints?: NumberDataPoint[] | null; aggregationTemporality?: unknown; isMonotonic?: boolean | null } | null
  histogram?: { dataPoints?: HistogramDataPoint[] | null; aggregationTemporality?: unknown } | null
  exponentialHistogram?: { dataPoints?: ExponentialHistogramDataPoint[] | null; aggregationTemporality?: unknown } | null
  summary?: { dataPoints?: SummaryDataPoint[] | null } | null
}

export interface ExportMetricsServiceRequest {
  resourceMetrics?: { resource?: Resource | null; scopeMetrics?: { scope?: Scope | null; metrics?: Metric[] | null }[] | null }[] | null
}

const TEMPORALITIES = ['AGGREGATION_TEMPORALITY_UNSPECIFIED', 'AGGREGATION_TEMPORALITY_DELTA', 'AGGREGATION_TEMPORALITY_CUMULATIVE'] as const
const TEMPORALITY_NAMES = ['unspecified', 'delta', 'cumulative']

/**
 * Every data point becomes one `performance` event (service, metric name, value, unit). Gauges and
 * sums give their value. A histogram, exponential histogram or summary point gives the mean of its
 * observations (sum / count) as `value`, so that the summary and series reads rank and average its
 * points like any other; its count, sum, min, max and buckets are kept in the event beside it. A point
 * that cannot be stored is refused with its reason (counted in `rejectedDataPoints`), never dropped.
 */
export function translateMetrics(request: ExportMetricsServiceRequest, receivedAt: number): Translation {
  const translation = emptyTranslation()
  for (const [r, resourceMetrics] of listAt(request.resourceMetrics, 'resourceMetrics').entries()) {
    if (!isMessage(resourceMetrics)) continue
    const resource = attributes(resourceMetrics.resource?.attributes)
    const service = serviceNameOf(resource)
    for (const [s, scopeMetrics] of listAt(resourceMetrics.scopeMetrics, `resourceMetrics[${r}].scopeMetrics`).entries()) {
      if (!isMessage(scopeMetrics)) continue
      for (const [m, metric] of listAt(scopeMetrics.metrics, `resourceMetrics[${r}].scopeMetrics[${s}].metrics`).entries()) {
        if (!isMessage(metric)) continue
        const at = `resourceMetrics[${r}].scopeMetrics[${s}].metrics[${m}]`
        const base = (point: { attributes?: KeyValue[] | null }, kind: string): Record<string, unknown> => {
          const data: Record<string, unknown> = {}
          if (service !== undefined) data.service = service
          if (typeof metric.name === 'string' && metric.name !== '') data.metric = metric.name
          if (typeof metric.unit === 'string' && metric.unit !== '') data.unit = metric.unit
          data.kind = kind
          data.attributes = attributes(point.attributes)
          return data
        }
        const points = <P>(kind: { dataPoints?: P[] | null } | null | undefined, name: string): P[] => (isMessage(kind) ? listAt(kind.dataPoints, `${at}.${name}.dataPoints`) : [])
        /** Each point is stored as one event, or refused with its reason: never taken and dropped. */
        const push = (point: unknown, describe: (point: never) => Record<string, unknown>) =>
          translateItem(translation, (item) => {
            requireMessage(point, 'data point')
            const data = describe(point as never)
            translation.events.push({ type: 'performance', ts: isoTime(nanosToMs((point as { timeUnixNano?: unknown }).timeUnixNano) ?? receivedAt), data })
            translation.itemOf.push(item)
          })
        for (const point of points(metric.gauge, 'gauge')) push(point, (p: NumberDataPoint) => ({ ...base(p, 'gauge'), ...numberValue(p) }))
        if (isMessage(metric.sum)) {
          const temporality = TEMPORALITY_NAMES[enumNumber(metric.sum.aggregationTemporality, TEMPORALITIES)]
          const monotonic = metric.sum.isMonotonic === true
          for (const point of points(metric.sum, 'sum')) push(point, (p: NumberDataPoint) => ({ ...base(p, 'sum'), ...numberValue(p), temporality, monotonic }))
        }
        if (isMessage(metric.histogram)) {
          const temporality = TEMPORALITY_NAMES[enumNumber(metric.histogram.aggregationTemporality, TEMPORALITIES)]
          for (const point of points(metric.histogram, 'histogram')) {
            push(point, (p: HistogramDataPoint) => ({
              ...base(p, 'histogram'),
              ...observations(p, 'histogram'),
              temporality,
              bucketCounts: listAt(p.bucketCounts, 'bucketCounts').map((count) => int64(count) ?? 0),
              explicitBounds: listAt(p.explicitBounds, 'explicitBounds'),
            }))
          }
        }
        if (isMessage(metric.exponentialHistogram)) {
          const temporality = TEMPORALITY_NAMES[enumNumber(metric.exponentialHistogram.aggregationTemporality, TEMPORALITIES)]
          for (const point of points(metric.exponentialHistogram, 'exponentialHistogram')) {
            push(point, (p: ExponentialHistogramDataPoint) => ({
              ...base(p, 'exponential_histogram'),
              ...observations(p, 'exponential histogram'),
              temporality,
              scale: typeof p.scale === 'number' ? p.scale : 0,
              zeroCount: int64(p.zeroCount) ?? 0,
              positive: buckets(p.positive),
              negative: buckets(p.negative),
            }))
          }
        }
        for (const point of points(metric.summary, 'summary')) {
          push(point, (p: SummaryDataPoint) => ({
            ...base(p, 'summary'),
            ...observations(p, 'summary'),
            quantiles: listAt(p.quantileValues, 'quantileValues').filter(isMessage).map((q) => ({ quantile: q.quantile ?? 0, value: q.value ?? 0 })),
          }))
        }
      }
    }
  }
  return translation
}

function numberValue(point: NumberDataPoint): { value?: number } {
  const value = point.asDouble ?? int64(point.asInt)
  return value === undefined || value === null || !Number.isFinite(value) ? {} : { value }
}

/**
 * value (the mean), count and sum, and min and max when sent. A point without observations (count 0)
 * or without a sum (optional for histograms) has no mean to chart: it is refused with that reason.
 */
function observations(point: { count?: unknown; sum?: number | null; min?: number | null; max?: number | null }, kind: string) {
  const count = int64(point.count) ?? 0
  if (!(count > 0)) throw new Error(`count: the ${kind} point has no observations (count ${count}), so no value to store`)
  if (typeof point.sum !== 'number' || !Number.isFinite(point.sum)) throw new Error(`sum: the ${kind} point has no sum, so no mean to store`)
  const summary: Record<string, number> = { value: point.sum / count, count, sum: point.sum }
  if (typeof point.min === 'number') summary.min = point.min
  if (typeof point.max === 'number') summary.max = point.max
  return summary
}

function buckets(value: Buckets | null | undefined) {
  if (!isMessage(value)) return { offset: 0, bucketCounts: [] }
  return { offset: typeof value.offset === 'number' ? value.offset : 0, bucketCounts: listAt(value.bucketCounts, 'bucketCounts').map((count) => int64(count) ?? 0) }
}
