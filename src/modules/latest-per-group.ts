import { sql, type SelectQueryBuilder } from 'kysely'
import type { PortalContext } from '../context.ts'
import { DEFAULT_LIMIT, type Page } from '../http/list.ts'
import { ProblemError } from '../http/problem.ts'
import { decodeCursor, encodeCursor } from '../ids.ts'
import { groupKeyOf } from './group-summaries.ts'
import type { EventModule, GroupSummary, TablesByName } from './module.ts'
import { moduleDb } from './read-route.ts'
import { withinTimeRange } from './time-window.ts'

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
  /** equality on columns of each group's latest event (jobs whose latest status is failed); not with `narrow` */
  latest?: Record<string, string>
  /** conditions on the events counted (a time range, an actor): the groups are then computed from the events */
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
  const page = spec.narrow ? await groupsOfEvents(ctx, spec, spec.narrow, limit, offset) : await groupsOfSummary(ctx, spec, limit, offset)
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
      latest: { id: event.id, ts: Number(event.ts), data: ctx.storage.parseJson<Record<string, unknown>>(event.data) },
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
  if (spec.latest) {
    query = query.innerJoin(`${spec.table} as latest`, 'latest.id', 'summary.last_event_id')
    for (const [column, value] of Object.entries(spec.latest)) query = query.where(sql.ref(`latest.${column}`), '=', value)
  }
  const rows = (await query.orderBy('summary.last_ts', 'desc').orderBy('summary.group_key').limit(limit + 1).offset(offset).execute()) as GroupRow[]
  return {
    groups: rows,
    async latestEvents(shown) {
      if (shown.length === 0) return new Map()
      const events = await db
        .selectFrom(spec.table)
        .select(['id', 'ts', 'data'])
        .where('id', 'in', shown.map((group) => group.last_event_id as string))
        .execute()
      const byId = new Map(events.map((event) => [event.id as string, event]))
      return new Map(shown.map((group) => [groupKeyOf(columns, group), byId.get(group.last_event_id as string)!]))
    },
  }
}

async function groupsOfEvents(
  ctx: PortalContext,
  spec: GroupQuery,
  narrow: NonNullable<GroupQuery['narrow']>,
  limit: number,
  offset: number,
): Promise<{ groups: GroupRow[]; latestEvents: LatestEvents }> {
  const db = moduleDb(ctx)
  const columns = spec.summary.columns
  const inScope = <O>(query: SelectQueryBuilder<TablesByName, string, O>) => {
    // as in the summary, events without the group's first column (an author, a job) form no group
    let scoped = narrow(query.where('project_id', '=', spec.projectId).where(columns[0], 'is not', null))
    for (const [column, value] of Object.entries(spec.groups ?? {})) scoped = scoped.where(column, '=', value)
    return scoped
  }
  let groupsQuery = inScope(
    db.selectFrom(spec.table).select((eb) => [...columns, eb.fn.countAll().as('events'), eb.fn.max('ts').as('last_ts'), eb.fn.min('ts').as('first_ts')]),
  )
    .groupBy(columns)
    .orderBy('last_ts', 'desc')
  for (const column of columns) groupsQuery = groupsQuery.orderBy(column, 'asc')
  const groups = (await groupsQuery.limit(limit + 1).offset(offset).execute()) as GroupRow[]
  return {
    groups,
    async latestEvents(shown) {
      if (shown.length === 0) return new Map()
      const rows = await inScope(
        db
          .selectFrom(spec.table)
          .select(['id', 'ts', 'data', ...columns])
          .where((eb) =>
            eb.or(
              shown.map((group) =>
                eb.and([...columns.map((column) => (group[column] === null ? eb(column, 'is', null) : eb(column, '=', group[column]))), eb('ts', '=', group.last_ts)]),
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
 * limit), per group, for the groups of one page; only groups whose latest event lacks it are looked up.
 */
export async function latestKnownValues(
  ctx: PortalContext,
  spec: { table: string; projectId: string; column: string; groups: GroupState[]; field: string },
): Promise<Map<string, unknown>> {
  const known = new Map<string, unknown>()
  const unknown: string[] = []
  for (const group of spec.groups) {
    const value = group.latest.data[spec.field]
    if (value !== undefined && value !== null) known.set(String(group.key[spec.column]), value)
    else unknown.push(String(group.key[spec.column]))
  }
  if (unknown.length === 0) return known
  const rows = await moduleDb(ctx)
    .selectFrom(spec.table)
    .select([spec.column, 'data'])
    .where('project_id', '=', spec.projectId)
    .where(spec.column, 'in', unknown)
    .where(ctx.storage.jsonText('data', spec.field), 'is not', null)
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .execute()
  for (const row of rows) {
    const key = row[spec.column] as string
    if (!known.has(key)) known.set(key, ctx.storage.parseJson<Record<string, unknown>>(row.data)[spec.field])
  }
  return known
}

/** Conditions on the events a summary counts (equality on columns, a time range); undefined when none is given. */
export function eventConditions(equal: Record<string, string | undefined>, from?: string, to?: string): GroupQuery['narrow'] {
  const given = Object.entries(equal).filter((entry): entry is [string, string] => entry[1] !== undefined)
  if (given.length === 0 && from === undefined && to === undefined) return undefined
  return (query) => given.reduce((narrowed, [column, value]) => narrowed.where(column, '=', value), withinTimeRange(query, from, to))
}

/** Equality on the group columns that were given. */
export function givenValues(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined))
}
