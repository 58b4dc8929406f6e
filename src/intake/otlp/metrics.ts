import { attributes, enumNumber, int64, isoTime, nanosToMs, serviceNameOf, type KeyValue, type Resource, type Scope } from './values.ts'
import { emptyTranslation, type Translation } from './translation.ts'

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
 * points like any other; its count, sum, min, max and buckets are kept in the event beside it.
 */
export function translateMetrics(request: ExportMetricsServiceRequest, receivedAt: number): Translation {
  const translation = emptyTranslation()
  for (const resourceMetrics of request.resourceMetrics ?? []) {
    const resource = attributes(resourceMetrics.resource?.attributes)
    const service = serviceNameOf(resource)
    for (const scopeMetrics of resourceMetrics.scopeMetrics ?? []) {
      for (const metric of scopeMetrics.metrics ?? []) {
        const base = (point: { attributes?: KeyValue[] | null }, kind: string): Record<string, unknown> => {
          const data: Record<string, unknown> = {}
          if (service !== undefined) data.service = service
          if (metric.name) data.metric = metric.name
          if (metric.unit) data.unit = metric.unit
          data.kind = kind
          data.attributes = attributes(point.attributes)
          return data
        }
        const push = (point: { timeUnixNano?: unknown }, data: Record<string, unknown> | undefined) => {
          const item = translation.items++
          // A histogram point without observations has no value to chart; it is taken and not stored.
          if (data === undefined) return
          translation.events.push({ type: 'performance', ts: isoTime(nanosToMs(point.timeUnixNano) ?? receivedAt), data })
          translation.itemOf.push(item)
        }
        for (const point of metric.gauge?.dataPoints ?? []) push(point, { ...base(point, 'gauge'), ...numberValue(point) })
        if (metric.sum) {
          const temporality = TEMPORALITY_NAMES[enumNumber(metric.sum.aggregationTemporality, TEMPORALITIES)]
          for (const point of metric.sum.dataPoints ?? []) {
            push(point, { ...base(point, 'sum'), ...numberValue(point), temporality, monotonic: metric.sum.isMonotonic === true })
          }
        }
        if (metric.histogram) {
          const temporality = TEMPORALITY_NAMES[enumNumber(metric.histogram.aggregationTemporality, TEMPORALITIES)]
          for (const point of metric.histogram.dataPoints ?? []) {
            const summary = observations(point)
            push(
              point,
              summary && {
                ...base(point, 'histogram'),
                ...summary,
                temporality,
                bucketCounts: (point.bucketCounts ?? []).map((count) => int64(count) ?? 0),
                explicitBounds: point.explicitBounds ?? [],
              },
            )
          }
        }
        if (metric.exponentialHistogram) {
          const temporality = TEMPORALITY_NAMES[enumNumber(metric.exponentialHistogram.aggregationTemporality, TEMPORALITIES)]
          for (const point of metric.exponentialHistogram.dataPoints ?? []) {
            const summary = observations(point)
            push(
              point,
              summary && {
                ...base(point, 'exponential_histogram'),
                ...summary,
                temporality,
                scale: point.scale ?? 0,
                zeroCount: int64(point.zeroCount) ?? 0,
                positive: buckets(point.positive),
                negative: buckets(point.negative),
              },
            )
          }
        }
        for (const point of metric.summary?.dataPoints ?? []) {
          const summary = observations(point)
          push(point, summary && { ...base(point, 'summary'), ...summary, quantiles: (point.quantileValues ?? []).map((q) => ({ quantile: q.quantile ?? 0, value: q.value ?? 0 })) })
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

/** value (the mean), count and sum, and min and max when sent; undefined for a point without observations. */
function observations(point: { count?: unknown; sum?: number | null; min?: number | null; max?: number | null }) {
  const count = int64(point.count) ?? 0
  if (count <= 0 || point.sum === null || point.sum === undefined) return undefined
  const summary: Record<string, number> = { value: point.sum / count, count, sum: point.sum }
  if (point.min !== null && point.min !== undefined) summary.min = point.min
  if (point.max !== null && point.max !== undefined) summary.max = point.max
  return summary
}

function buckets(value: Buckets | null | undefined) {
  return { offset: value?.offset ?? 0, bucketCounts: (value?.bucketCounts ?? []).map((count) => int64(count) ?? 0) }
}
