import type { SelectQueryBuilder } from 'kysely'
import type { PortalContext } from '../context.ts'
import { DEFAULT_LIMIT, queryTime, type Page } from '../http/list.ts'
import { ProblemError } from '../http/problem.ts'
import { decodeCursor, encodeCursor } from '../ids.ts'
import { groupKeyOf } from './group-summaries.ts'
import type { EventModule, GroupSummary, TablesByName } from './module.ts'
import { eventsDb, moduleDb } from './read-route.ts'
import { withinTimeRange } from './time-window.ts'
import { groupCountsOverWindow } from './group-hours.ts'

/** A group summary the module declares; its reads are written against it. */
export function summaryOf(module: EventModule, name: string): GroupSummary {
  const summary = module.summaries?.[name]
  if (!summary) throw new Error(`module ${module.name} declares no summary ${name}`)
  return summary
}

/**
 * Summaries (one row per flag, job, path, …) are recomputed on every read, so their cursor is a
 * position in the ordered summary rather than a row's key.
 */
function summaryOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0
  const position = decodeCursor(cursor, ['number'])
  if (!position || !Number.isInteger(position[0]) || Number(position[0]) < 0) {
    throw new ProblemError(400, 'invalid_cursor', 'query.cursor: is not a cursor this portal returned')
  }
  return Number(position[0])
}

/** The latest event of one group (a flag key, a job, a service in an environment) and how many it has. */
export interface GroupState {
  key: Record<string, string | null>
  events: number
  firstTs: number
  lastTs: number
  latest: { id: string; ts: number; data: Record<string, unknown> }
}

export interface GroupQuery {
  table: string
  projectId: string
  /** the module's summary of these groups */
  summary: GroupSummary
  /** equality on group columns (a service, one flag key) */
  groups?: Record<string, string>
  /** equality on columns of each group's latest event that its summary keeps (`GroupSummary.latest`: jobs whose latest status is failed); not with `window` or `narrow` */
  latest?: Record<string, string>
  /** the events counted: `from` <= ts < `to` (ISO 8601); the groups are then computed over it */
  window?: { from?: string; to?: string }
  /** conditions on the events counted (an actor): the groups are then computed from the events */
  narrow?: <O>(query: SelectQueryBuilder<TablesByName, string, O>) => SelectQueryBuilder<TablesByName, string, O>
  limit?: number
  cursor?: string
}

interface GroupRow {
  events: unknown
  first_ts: unknown
  last_ts: unknown
  [column: string]: unknown
}

/**
 * One row per group of a project's events, the most recently active group first, each with its
 * latest event (by `ts`, then id) and its event count. Without `narrow`, a page of the summary table
 * kept at ingest; with it, the groups of the matching events.
 */
export async function latestPerGroup(ctx: PortalContext, spec: GroupQuery): Promise<Page<GroupState>> {
  const limit = spec.limit ?? DEFAULT_LIMIT
  const offset = summaryOffset(spec.cursor)
  const windowed = spec.window?.from !== undefined || spec.window?.to !== undefined
  const page = spec.narrow || windowed ? await groupsOfEvents(ctx, spec, limit, offset) : await groupsOfSummary(ctx, spec, limit, offset)
  const more = page.groups.length > limit
  const shown = more ? page.groups.slice(0, limit) : page.groups
  const latest = await page.latestEvents(shown)
  const data = shown.map((group) => {
    const event = latest.get(groupKeyOf(spec.summary.columns, group))!
    return {
      key: Object.fromEntries(spec.summary.columns.map((column) => [column, (group[column] ?? null) as string | null])),
      events: Number(group.events),
      firstTs: Number(group.first_ts),
      lastTs: Number(group.last_ts),
      latest: { id: event.id, ts: Number(event.ts), data: ctx.storage.eventsOf(spec.table).dataOf(event) },
    }
  })
  return { data, nextCursor: more ? encodeCursor([offset + limit]) : null }
}

type LatestEvents = (groups: GroupRow[]) => Promise<Map<string, { id: string; ts: unknown; data: unknown }>>

async function groupsOfSummary(ctx: PortalContext, spec: GroupQuery, limit: number, offset: number): Promise<{ groups: GroupRow[]; latestEvents: LatestEvents }> {
  const db = moduleDb(ctx)
  const { table, columns } = spec.summary
  let query = db
    .selectFrom(`${table} as summary`)
    .select([...columns.map((column) => `summary.${column}`), 'summary.events', 'summary.first_ts', 'summary.last_ts', 'summary.last_event_id'])
    .where('summary.project_id', '=', spec.projectId)
  const groups = spec.groups ?? {}
  if (columns.every((column) => groups[column] !== undefined)) query = query.where('summary.group_key', '=', groupKeyOf(columns, groups))
  else for (const [column, value] of Object.entries(groups)) query = query.where(`summary.${column}`, '=', value)
  for (const [column, value] of Object.entries(spec.latest ?? {})) {
    if (!spec.summary.latest?.includes(column)) throw new Error(`${table} keeps no latest ${column}: declare it in the summary's latest`)
    query = query.where(`summary.latest_${column}`, '=', value)
  }
  const rows = (await query.orderBy('summary.last_ts', 'desc').orderBy('summary.group_key').limit(limit + 1).offset(offset).execute()) as GroupRow[]
  return {
    groups: rows,
    async latestEvents(shown) {
      if (shown.length === 0) return new Map()
      const events = await eventsDb(ctx, spec.table)
        .selectFrom(spec.table)
        .select(['id', 'ts', 'data', ...ctx.storage.eventsOf(spec.table).dataColumns])
        .where('id', 'in', shown.map((group) => group.last_event_id as string))
        .execute()
      const byId = new Map(events.map((event) => [event.id as string, event]))
      return new Map(shown.map((group) => [groupKeyOf(columns, group), byId.get(group.last_event_id as string)!]))
    },
  }
}

async function groupsOfEvents(ctx: PortalContext, spec: GroupQuery, limit: number, offset: number): Promise<{ groups: GroupRow[]; latestEvents: LatestEvents }> {
  const db = eventsDb(ctx, spec.table)
  const columns = spec.summary.columns
  const narrow = spec.narrow ?? ((query) => query)
  const inScope = <O>(query: SelectQueryBuilder<TablesByName, string, O>) => {
    // as in the summary, events without the group's first column (an author, a job) form no group
    let scoped = narrow(withinTimeRange(query.where('project_id', '=', spec.projectId).where(columns[0], 'is not', null), spec.window?.from, spec.window?.to))
    for (const [column, value] of Object.entries(spec.groups ?? {})) scoped = scoped.where(column, '=', value)
    return scoped
  }
  const { hours } = spec.summary
  // Over a window alone, whole hours come from the summary's hourly counts; other conditions need the events.
  const counted =
    hours !== undefined && spec.narrow === undefined
      ? await groupCountsOverWindow(ctx, {
          table: spec.table,
          projectId: spec.projectId,
          summary: { ...spec.summary, hours },
          groups: spec.groups ?? {},
          fromMs: queryTime(spec.window?.from),
          toMs: queryTime(spec.window?.to),
        })
      : undefined
  let groupsQuery = inScope(
    db.selectFrom(spec.table).select((eb) => [...columns, eb.fn.countAll().as('events'), eb.fn.max('ts').as('last_ts'), eb.fn.min('ts').as('first_ts')]),
  )
    .groupBy(columns)
    .orderBy('last_ts', 'desc')
  for (const column of columns) groupsQuery = groupsQuery.orderBy(column, 'asc')
  const groups = counted
    ? (counted.sort((a, b) => b.last_ts - a.last_ts || compareColumns(columns, a, b)).slice(offset, offset + limit + 1) as GroupRow[])
    : ((await groupsQuery.limit(limit + 1).offset(offset).execute()) as GroupRow[])
  return {
    groups,
    async latestEvents(shown) {
      if (shown.length === 0) return new Map()
      // The project in every term, and no window around them (each time is in it): so SQLite seeks each group's
      // latest event in its group index, where a window beside the terms made it walk every event of the window.
      const rows = await narrow(
        db
          .selectFrom(spec.table)
          .select(['id', 'ts', 'data', ...columns, ...ctx.storage.eventsOf(spec.table).dataColumns])
          .where((eb) =>
            eb.or(
              shown.map((group) =>
                eb.and([
                  eb('project_id', '=', spec.projectId),
                  ...columns.map((column) => (group[column] === null ? eb(column, 'is', null) : eb(column, '=', group[column]))),
                  eb('ts', '=', group.last_ts),
                ]),
              ),
            ),
          ),
      )
        .orderBy('ts', 'desc')
        .orderBy('id', 'desc')
        .execute()
      const latest = new Map<string, { id: string; ts: unknown; data: unknown }>()
      for (const row of rows) {
        const key = groupKeyOf(columns, row)
        if (!latest.has(key)) latest.set(key, row as { id: string; ts: unknown; data: unknown })
      }
      return latest
    },
  }
}

/**
 * The latest value of a payload field that not every event repeats (a job's artifact URL, a tenant's
 * limit), per group, for the groups of one page. Only groups whose latest event lacks it are looked up, each
 * with one probe of the partial index on `fieldColumn` (addFieldColumnV1), which copies the field: a field
 * seldom or never sent would otherwise mean reading every event of the group. The probes go in one
 * statement, so that a page holds one connection, not one per group.
 */
export async function latestKnownValues(
  ctx: PortalContext,
  spec: { table: string; projectId: string; column: string; groups: GroupState[]; field: string; fieldColumn: string },
): Promise<Map<string, unknown>> {
  const known = new Map<string, unknown>()
  const unknown: string[] = []
  for (const group of spec.groups) {
    const value = group.latest.data[spec.field]
    if (value !== undefined && value !== null) known.set(String(group.key[spec.column]), value)
    else unknown.push(String(group.key[spec.column]))
  }
  if (unknown.length === 0) return known
  const db = eventsDb(ctx, spec.table)
  const probe = (key: string) =>
    db
      .selectFrom(
        db
          .selectFrom(spec.table)
          .select([spec.column, spec.fieldColumn])
          .where('project_id', '=', spec.projectId)
          .where(spec.column, '=', key)
          .where(spec.fieldColumn, 'is not', null)
          .orderBy('ts', 'desc')
          .orderBy('id', 'desc')
          .limit(1)
          .as('latest'),
      )
      .selectAll()
  const [first, ...rest] = unknown.map(probe)
  const rows = await rest.reduce((query, next) => query.unionAll(next), first).execute()
  for (const row of rows) known.set(String(row[spec.column]), row[spec.fieldColumn])
  return known
}

/** Conditions on the events a summary counts (equality on columns); undefined when none is given. */
export function eventConditions(equal: Record<string, string | undefined>): GroupQuery['narrow'] {
  const given = Object.entries(equal).filter((entry): entry is [string, string] => entry[1] !== undefined)
  if (given.length === 0) return undefined
  return (query) => given.reduce((narrowed, [column, value]) => narrowed.where(column, '=', value), query)
}

/** Group columns in ascending order, nulls first. */
function compareColumns(columns: string[], a: Record<string, unknown>, b: Record<string, unknown>): number {
  for (const column of columns) {
    const [x, y] = [a[column], b[column]]
    if (x === y) continue
    if (x === null || x === undefined) return -1
    if (y === null || y === undefined) return 1
    return String(x) < String(y) ? -1 : 1
  }
  return 0
}

/** Equality on the group columns that were given. */
export function givenValues(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined))
}
