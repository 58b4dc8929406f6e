import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely'
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
  /** a column each row counts that many events by (rows of per-minute counts); one event a row without it */
  weight?: string
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

/**
 * Events per series over the window: the settled minutes from the portal's kept counts when the query has them.
 * `spec` may be several windows over tables of one database (a module's events, and counts of those it gave up),
 * counted together in one statement, so that rows moving from one to the other meanwhile count once.
 */
export async function countWindowEvents(ctx: PortalContext, spec: EventWindow | EventWindow[], query: SignalQuery, wholeMinutes?: WholeMinutes): Promise<SeriesValue[]> {
  const specs = Array.isArray(spec) ? spec : [spec]
  if (!query.kept) return countStoredEvents(ctx, specs, query)
  return query.kept.counts.count(query.kept.scope, specs.map((part) => part.table).join('+'), query, {
    range: (fromMs, toMs) => countStoredEvents(ctx, specs, { ...query, fromMs, toMs }),
    perMinute: (fromMs, toMs) => (wholeMinutes ?? countStoredEventsPerMinute)(ctx, specs, { ...query, fromMs, toMs }),
  })
}

/** Events per minute and series of a window of whole minutes: by default, counted from the windows' events. */
export type WholeMinutes = (ctx: PortalContext, specs: EventWindow[], query: SignalQuery) => Promise<{ minute: number; series: string; value: number }[]>

/** The events a window's rows hold: one a row, or the sum of its `weight` column. */
export function eventCount(spec: EventWindow) {
  return (eb: ExpressionBuilder<TablesByName, string>) => (spec.weight === undefined ? eb.fn.countAll() : eb.fn.coalesce(eb.fn.sum(spec.weight), sql.lit(0)))
}

/** Each window's events per series (and per minute), as rows of `series`, `value` (and `minute`). */
function countsOf(ctx: PortalContext, specs: EventWindow[], query: SignalQuery, perMinute: boolean) {
  return specs.map((spec) => {
    const { rows, store } = windowEvents(ctx, spec, query)
    const series = query.by === undefined ? sql.lit('') : spec.dimensions[query.by](store)
    const minute = sql<number>`ts - ts % ${sql.lit(60_000)}`
    const counted = rows.select((eb) => [
      eb.fn.coalesce(eb.cast(series, 'text'), sql.lit(NO_VALUE_SERIES)).as('series'),
      eventCount(spec)(eb).as('value'),
      ...(perMinute ? [minute.as('minute')] : []),
    ])
    const groups = [...(query.by === undefined ? [] : ['series']), ...(perMinute ? ['minute'] : [])]
    return groups.length === 0 ? counted : counted.groupBy(groups)
  })
}

/** The parts' rows summed per series (and minute): one part as it is, several through a UNION ALL in one statement. */
async function summed(ctx: PortalContext, specs: EventWindow[], parts: WindowQuery[], perMinute: boolean) {
  if (parts.length === 1) return (await parts[0].execute()) as { series: unknown; value: unknown; minute?: unknown }[]
  const union = parts.reduce((all, part) => all.unionAll(part as never))
  const keys = perMinute ? ['series', 'minute'] : ['series']
  return (await eventsDb(ctx, specs[0].table)
    .selectFrom(union.as('parts'))
    .select((eb) => [...keys, eb.fn.sum('value').as('value')] as never)
    .groupBy(keys as never)
    .execute()) as { series: unknown; value: unknown; minute?: unknown }[]
}

async function countStoredEvents(ctx: PortalContext, specs: EventWindow[], query: SignalQuery): Promise<SeriesValue[]> {
  const found = (await summed(ctx, specs, countsOf(ctx, specs, query, false), false)).map((row) => ({ series: String(row.series), value: Number(row.value) }))
  return query.by === undefined && found.length === 0 ? [{ series: '', value: 0 }] : found
}

export async function countStoredEventsPerMinute(ctx: PortalContext, specs: EventWindow[], query: SignalQuery): Promise<{ minute: number; series: string; value: number }[]> {
  const found = await summed(ctx, specs, countsOf(ctx, specs, query, true), true)
  return found.map((row) => ({ minute: Number(row.minute), series: String(row.series), value: Number(row.value) }))
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
