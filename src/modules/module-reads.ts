import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, queryTime, toPage, type Page } from '../http/list.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { decodeCursor, encodeCursor } from '../ids.ts'
import { findProject } from '../projects/store.ts'
import { groupKeyOf } from './group-summaries.ts'
import type { EventModule, GroupSummary } from './module.ts'

/** Building blocks of the module-specific reads in each module's `reads.ts`. */

export type ReadsApp = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>

/** A module's reads plugin (its `routes`), handed an app that types requests from their TypeBox schemas. */
export function moduleReads(
  register: (app: ReadsApp, ctx: PortalContext, module: EventModule<any>) => void,
): FastifyPluginAsync<{ ctx: PortalContext; module: EventModule<any> }> {
  return async (instance, { ctx, module }) => register(instance.withTypeProvider<TypeBoxTypeProvider>(), ctx, module)
}

/** A group summary the module declares; its reads are written against it. */
export function summaryOf(module: EventModule<any>, name: string): GroupSummary {
  const summary = module.summaries?.[name]
  if (!summary) throw new Error(`module ${module.name} declares no summary ${name}`)
  return summary
}

/** Route options of a read: any access token, unknown query parameters refused, every status documented. */
export function readRoute<Q extends TProperties, R extends TSchema, P extends TProperties = {}>(spec: {
  /** stable camelCase name of the operation, for generated clients */
  operationId: string
  tag: string
  summary: string
  description: string
  query: Q
  params?: P
  response: R
}) {
  return {
    config: { access: 'read' as const },
    schema: {
      operationId: spec.operationId,
      tags: [spec.tag],
      summary: spec.summary,
      description: spec.description,
      params: Type.Object(spec.params ?? ({} as P), { additionalProperties: false }) as TObject<P>,
      querystring: Type.Object(spec.query, { additionalProperties: false }),
      response: { 200: spec.response, ...problemResponses(400, 401, 403, 404, 503) },
    },
  }
}

export const ProjectQuery = { project_id: Type.String({ description: 'the project to read (prj_…); 404 unless it is a live project of your organisation', examples: ['prj_01JD3Z8Q6R2N5M7K9P4TXYZABC'] }) }

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const IsoTime = (description?: string) => Type.String({ format: 'date-time', description })

/** `from` and `to` of a read's time window (as `withinTimeRange` applies them), described as what they bound: changes, logs, values. */
export const TimeWindowQuery = (what: string) => ({ from: Type.Optional(IsoTime(`${what} at or after`)), to: Type.Optional(IsoTime(`${what} before`)) })

/** Module tables are known to Kysely only by name. */
export function moduleDb(ctx: PortalContext): Kysely<any> {
  return ctx.storage.db as unknown as Kysely<any>
}

/** Every read is scoped to one live project of the caller's organisation; anything else is a 404. */
export async function requireReadableProject(ctx: PortalContext, request: FastifyRequest, projectId: string): Promise<void> {
  await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
}

/** Narrows to events with `from` <= ts < `to` (ISO 8601, already checked by the schema). */
export function withinTimeRange<Q extends SelectQueryBuilder<any, any, any>>(query: Q, from: string | undefined, to: string | undefined, column = 'ts'): Q {
  let narrowed = query
  const fromMs = queryTime(from)
  const toMs = queryTime(to)
  if (fromMs !== undefined) narrowed = narrowed.where(column, '>=', fromMs) as Q
  if (toMs !== undefined) narrowed = narrowed.where(column, '<', toMs) as Q
  return narrowed
}

export function isoFromMs(epochMs: number | string): string {
  return new Date(Number(epochMs)).toISOString()
}

/** A 400 that names the query parameter at fault, like the schema's own. */
export function badQuery(parameter: string, problem: string): ProblemError {
  return new ProblemError(400, 'invalid_request', `query.${parameter}: ${problem}`)
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
  narrow?: (query: SelectQueryBuilder<any, any, any>) => SelectQueryBuilder<any, any, any>
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
  const inScope = (query: SelectQueryBuilder<any, any, any>) => {
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

export interface HistoryEvent {
  id: string
  ts: number
  data: Record<string, unknown>
}

/** What a module's reads of one group summary (its list, one group) share. */
export interface GroupReads<Item extends TObject> {
  /** the list's path; one group's path is below it */
  path: string
  /** the name of the module's summary of these groups */
  groupSummary: string
  /** one group's response item */
  item: Item
  /** the items of a page of groups, given at once so that what the latest events do not repeat is looked up once per page */
  itemsOf(groups: GroupState[], projectId: string): Static<Item>[] | Promise<Static<Item>[]>
}

/** Which groups and events the list's own query parameters select. */
type GroupSelection = Pick<GroupQuery, 'groups' | 'latest' | 'narrow'>

/** `GET {path}`: a page of the groups, most recently active first; `filters` are its query parameters besides the project and the page. */
export function groupListRoute<Item extends TObject, Filters extends TProperties = {}>(
  app: ReadsApp,
  ctx: PortalContext,
  module: EventModule<any>,
  spec: GroupReads<Item> & { operationId: string; summary: string; description: string; filters?: Filters; select?: (query: Static<TObject<Filters>>) => GroupSelection },
): void {
  const summary = summaryOf(module, spec.groupSummary)
  // widened because TypeScript cannot follow a generic Item through List; `itemsOf` is checked against Item where it is given
  const response: TSchema = List(spec.item)
  app.get(
    spec.path,
    readRoute({
      operationId: spec.operationId,
      tag: module.name,
      summary: spec.summary,
      description: spec.description,
      query: { ...ProjectQuery, ...spec.filters, ...PageQuery },
      response,
    }),
    async (request) => {
      const query = request.query as Static<TObject<Filters>> & { project_id: string; limit?: number; cursor?: string }
      const { project_id: projectId, limit, cursor } = query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, { table: module.table, projectId, summary, ...spec.select?.(query), limit, cursor })
      return { data: await spec.itemsOf(page.data, projectId), nextCursor: page.nextCursor }
    },
  )
}

/**
 * `GET {path}/:{param}`: one group's item and a page of its events (`eventOf` each), newest first;
 * a 404 naming `what` when the project has no event of it. For summaries of one column, which the
 * parameter gives.
 */
export function groupDetailRoute<Item extends TObject, Event extends TObject>(
  app: ReadsApp,
  ctx: PortalContext,
  module: EventModule<any>,
  spec: GroupReads<Item> & { operationId: string; param: string; what: string; summary: string; description: string; event: Event; eventOf(event: HistoryEvent): Static<Event> },
): void {
  const summary = summaryOf(module, spec.groupSummary)
  const [column, ...more] = summary.columns
  if (more.length > 0) throw new Error(`module ${module.name}: one ${spec.param} cannot name a group of summary ${spec.groupSummary}, which has ${summary.columns.length} columns`)
  // widened as the list's response is
  const response: TSchema = Type.Object({ ...spec.item.properties, history: List(spec.event) })
  app.get(
    `${spec.path}/:${spec.param}`,
    readRoute({
      operationId: spec.operationId,
      tag: module.name,
      summary: spec.summary,
      description: spec.description,
      params: { [spec.param]: Type.String({ description: `the ${spec.what}’s ${spec.param}` }) },
      query: { ...ProjectQuery, ...PageQuery },
      response,
    }),
    async (request) => {
      const { project_id: projectId, limit, cursor } = request.query
      const value = (request.params as Record<string, string>)[spec.param]
      await requireReadableProject(ctx, request, projectId)
      const state = await latestPerGroup(ctx, { table: module.table, projectId, summary, groups: { [column]: value } })
      if (state.data.length === 0) throw new ProblemError(404, 'not_found', `${spec.what} ${value} has no events in project ${projectId}`)
      const [item] = await spec.itemsOf(state.data, projectId)
      return { ...item, history: await groupHistory(ctx, { table: module.table, projectId, column, value, limit, cursor }, spec.eventOf) }
    },
  )
}

/** One group's events (a flag's changes, a job's statuses), newest first, paged like the events list. */
async function groupHistory<T>(
  ctx: PortalContext,
  spec: { table: string; projectId: string; column: string; value: string; limit?: number; cursor?: string },
  eventOf: (event: HistoryEvent) => T,
): Promise<Page<T>> {
  const limit = spec.limit ?? DEFAULT_LIMIT
  const query = moduleDb(ctx).selectFrom(spec.table).select(['id', 'ts', 'data']).where('project_id', '=', spec.projectId).where(spec.column, '=', spec.value)
  const rows = await pageAfter(query, spec.cursor, limit, 'ts', 'id').execute()
  return toPage(rows, limit, (row) => [Number(row.ts), row.id], (row) => eventOf({ id: row.id, ts: Number(row.ts), data: ctx.storage.parseJson<Record<string, unknown>>(row.data) }))
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
