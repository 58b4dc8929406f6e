import { sql, type Expression, type SelectQueryBuilder } from 'kysely'
import type { PortalContext } from '../context.ts'
import type { TablesByName } from '../modules/module.ts'
import { eventsDb } from '../modules/read-route.ts'
import type { EventStore } from '../storage/event-store.ts'
import type { SeriesValue, SignalQuery } from './signal.ts'

/** A query over one module's event table, narrowed to a project and a window. */
export type WindowQuery = SelectQueryBuilder<TablesByName, string, {}>

/** How a rule filter narrows a window's events: `value` as the rule holds it; `name` is the filter's full name (`field.userId`). */
export type WindowFilter = (query: WindowQuery, value: string, store: EventStore, name: string) => WindowQuery

/** What a value over a dimension is grouped by: a column, or an expression over the row (a payload field). */
export type WindowDimension = (store: EventStore) => Expression<unknown>

/** A series named by a null dimension value (a log without a level). */
export const NO_VALUE_SERIES = '(none)'

/** How a signal over a module's event table reads a window (the columnar store's, DuckDB on the default). */
export interface EventWindow {
  table: string
  filters: Record<string, WindowFilter>
  dimensions: Record<string, WindowDimension>
  /** conditions every counted event meets (a failed deploy's status) */
  where?: (query: WindowQuery, store: EventStore) => WindowQuery
}

export const column = (name: string): WindowDimension => () => sql.ref(name)
export const payloadField = (...keys: string[]): WindowDimension => (store) => store.jsonPathText('data', keys)
export const columnIs = (name: string): WindowFilter => (query, value) => query.where(name, '=', value)
export const payloadFieldIs = (...keys: string[]): WindowFilter => (query, value, store) => query.where(store.jsonPathText('data', keys), '=', value)

/** The events of the window that the rule's filters keep: the index on (project, ts) bounds the scan to the window. */
export function windowEvents(ctx: PortalContext, spec: EventWindow, query: SignalQuery): { rows: WindowQuery; store: EventStore } {
  const store = ctx.storage.eventsOf(spec.table)
  let rows = eventsDb(ctx, spec.table).selectFrom(spec.table).where('project_id', '=', query.projectId).where('ts', '>=', query.fromMs).where('ts', '<', query.toMs) as WindowQuery
  if (spec.where) rows = spec.where(rows, store)
  for (const [name, value] of Object.entries(query.filters)) {
    const filter = spec.filters[name] ?? spec.filters[`${name.split('.')[0]}.*`]
    rows = filter(rows, value, store, name)
  }
  return { rows, store }
}

/** Events per series over the window: the settled minutes from the portal's kept counts when the query has them. */
export async function countWindowEvents(ctx: PortalContext, spec: EventWindow, query: SignalQuery): Promise<SeriesValue[]> {
  if (!query.kept) return countStoredEvents(ctx, spec, query)
  return query.kept.counts.count(query.kept.scope, spec.table, query, {
    range: (fromMs, toMs) => countStoredEvents(ctx, spec, { ...query, fromMs, toMs }),
    perMinute: (fromMs, toMs) => countStoredEventsPerMinute(ctx, spec, { ...query, fromMs, toMs }),
  })
}

async function countStoredEvents(ctx: PortalContext, spec: EventWindow, query: SignalQuery): Promise<SeriesValue[]> {
  const { rows, store } = windowEvents(ctx, spec, query)
  if (query.by === undefined) {
    const row = await rows.select((eb) => eb.fn.countAll().as('value')).executeTakeFirst()
    return [{ series: '', value: Number((row as { value?: unknown } | undefined)?.value ?? 0) }]
  }
  const dimension = spec.dimensions[query.by](store)
  const found = await rows
    .select((eb) => [eb.fn.coalesce(eb.cast(dimension, 'text'), sql.lit(NO_VALUE_SERIES)).as('series'), eb.fn.countAll().as('value')])
    .groupBy('series')
    .execute()
  return (found as { series: unknown; value: unknown }[]).map((row) => ({ series: String(row.series), value: Number(row.value) }))
}

async function countStoredEventsPerMinute(ctx: PortalContext, spec: EventWindow, query: SignalQuery): Promise<{ minute: number; series: string; value: number }[]> {
  const { rows, store } = windowEvents(ctx, spec, query)
  const minute = sql<number>`ts - ts % ${sql.lit(60_000)}`
  if (query.by === undefined) {
    const found = await rows.select((eb) => [minute.as('minute'), eb.fn.countAll().as('value')]).groupBy('minute').execute()
    return (found as { minute: unknown; value: unknown }[]).map((row) => ({ minute: Number(row.minute), series: '', value: Number(row.value) }))
  }
  const dimension = spec.dimensions[query.by](store)
  const found = await rows
    .select((eb) => [minute.as('minute'), eb.fn.coalesce(eb.cast(dimension, 'text'), sql.lit(NO_VALUE_SERIES)).as('series'), eb.fn.countAll().as('value')])
    .groupBy(['minute', 'series'])
    .execute()
  return (found as { minute: unknown; series: unknown; value: unknown }[]).map((row) => ({ minute: Number(row.minute), series: String(row.series), value: Number(row.value) }))
}

/** The aggregates of a value over a window that `aggregateWindowValues` computes. */
export const VALUE_AGGREGATES = ['p95', 'p50', 'p99', 'avg', 'min', 'max', 'sum', 'count']
const PERCENTILES = [50, 95, 99] as const

/** An aggregate of `value` per series over the window: count, sum, avg, min, max or a nearest-rank percentile. */
export async function aggregateWindowValues(ctx: PortalContext, spec: EventWindow & { value: WindowDimension }, query: SignalQuery): Promise<SeriesValue[]> {
  const { rows, store } = windowEvents(ctx, spec, query)
  const value = spec.value(store)
  const series = query.by === undefined ? sql.lit('') : spec.dimensions[query.by](store)
  const values = rows
    .where(value as never, 'is not', null)
    .select((eb) => [eb.cast(value, 'double precision').as('value'), eb.fn.coalesce(eb.cast(series, 'text'), sql.lit(NO_VALUE_SERIES)).as('series')])
  const within = eventsDb(ctx, spec.table).selectFrom(values.as('window_values'))
  if (query.aggregate === 'sum') {
    const sums = await within.select((eb) => ['series', eb.fn.sum('value').as('value')]).groupBy('series').execute()
    return sums.map((row) => ({ series: String(row.series), value: Number(row.value) }))
  }
  const found = await store.percentilesByGroup(within, ['series'], PERCENTILES)
  return found.map((row) => ({ series: String(row.series), value: Number(row[query.aggregate]) }))
}
