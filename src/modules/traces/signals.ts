import { sql } from 'kysely'
import type { AlertSignal, SeriesValue, SignalQuery } from '../../alerts/signal.ts'
import { aggregateWindowValues, column, columnIs, NO_VALUE_SERIES, windowEvents, type EventWindow } from '../../alerts/event-window.ts'
import type { PortalContext } from '../../context.ts'
import type { EventStore } from '../../storage/event-store.ts'

const SPAN_WINDOW: EventWindow & { value: () => ReturnType<typeof sql.ref> } = {
  table: 'trace_events',
  filters: { service: columnIs('service_name'), span: columnIs('name') },
  dimensions: { service: column('service_name'), span: column('name') },
  value: () => sql.ref('duration_ms'),
}

const FILTERS = { service: 'the span’s service (`serviceName`)', span: 'the span’s name (operation)' }
const DIMENSIONS = { service: 'the service', span: 'the span name' }

/** A span that failed, as the traces reads tell it: OTLP status `error`, or an HTTP 5xx attribute. */
function failedSpan(store: EventStore) {
  const text = (keys: string[]) => store.jsonPathText('data', keys)
  return sql<boolean>`(${text(['status', 'code'])} = 'error' or ${text(['attributes', 'http.response.status_code'])} like '5__' or ${text(['attributes', 'http.status_code'])} like '5__')`
}

/** Failed spans as a percentage of the window's spans, per series. */
async function errorRate(ctx: PortalContext, query: SignalQuery): Promise<SeriesValue[]> {
  const { rows, store } = windowEvents(ctx, SPAN_WINDOW, query)
  const series = query.by === undefined ? sql.lit('') : SPAN_WINDOW.dimensions[query.by](store)
  const found = await rows
    .select((eb) => [
      eb.fn.coalesce(eb.cast(series, 'text'), sql.lit(NO_VALUE_SERIES)).as('series'),
      eb.fn.countAll().as('spans'),
      sql<number>`sum(case when ${failedSpan(store)} then 1 else 0 end)`.as('failed'),
    ])
    .groupBy('series')
    .execute()
  return (found as { series: unknown; spans: unknown; failed: unknown }[]).map((row) => ({ series: String(row.series), value: (100 * Number(row.failed ?? 0)) / Number(row.spans) }))
}

const SLOWEST = 5

export const traceSignals: AlertSignal[] = [
  {
    name: 'traces.duration',
    description: 'Span duration over the window: a percentile, the average or the maximum',
    unit: 'ms',
    aggregates: ['p95', 'p50', 'p99', 'avg', 'max'],
    filters: FILTERS,
    dimensions: DIMENSIONS,
    absentIsZero: false,
    uiSection: 'traces',
    evaluate: (ctx, query) => aggregateWindowValues(ctx, SPAN_WINDOW, query),
    async contributors(ctx, query, series) {
      const narrowed = query.by === undefined ? query : { ...query, filters: { ...query.filters, [query.by]: series } }
      const { rows } = windowEvents(ctx, SPAN_WINDOW, narrowed)
      const spans = await rows.select(['trace_id', 'name', 'service_name', 'duration_ms', 'ts']).where('duration_ms', 'is not', null).orderBy('duration_ms', 'desc').limit(SLOWEST).execute()
      return (spans as Record<string, unknown>[]).map((span) => ({
        label: `${span.service_name ?? '?'} ${span.name ?? '(unnamed)'}`,
        value: Number(span.duration_ms),
        detail: `trace ${span.trace_id}`,
        at: new Date(Number(span.ts)).toISOString(),
      }))
    },
  },
  {
    name: 'traces.error_rate',
    description: 'Failed spans (OTLP status error, or an HTTP 5xx attribute) as a percentage of the window’s spans',
    unit: '%',
    aggregates: ['rate'],
    filters: FILTERS,
    dimensions: DIMENSIONS,
    absentIsZero: false,
    uiSection: 'traces',
    evaluate: errorRate,
  },
]
