import { Type, type TObject, type TProperties, type TSchema } from 'typebox'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, pageAfter, queryTime, toPage, type Page } from '../http/list.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { decodeCursor, encodeCursor } from '../ids.ts'
import { findProject } from '../projects/store.ts'

/** Building blocks of the module-specific reads in each module's `reads.ts`. */

export type ReadsApp = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>

/** A module's reads plugin (its `routes`), handed an app that types requests from their TypeBox schemas. */
export function moduleReads(register: (app: ReadsApp, ctx: PortalContext) => void): FastifyPluginAsync<{ ctx: PortalContext }> {
  return async (instance, { ctx }) => register(instance.withTypeProvider<TypeBoxTypeProvider>(), ctx)
}

/** Route options of a read: any access token, unknown query parameters refused, every status documented. */
export function readRoute<Q extends TProperties, R extends TSchema, P extends TProperties = {}>(spec: {
  tag: string
  summary: string
  description?: string
  query: Q
  params?: P
  response: R
}) {
  return {
    config: { access: 'read' as const },
    schema: {
      tags: [spec.tag],
      summary: spec.summary,
      description: spec.description,
      params: Type.Object(spec.params ?? ({} as P), { additionalProperties: false }) as TObject<P>,
      querystring: Type.Object(spec.query, { additionalProperties: false }),
      response: { 200: spec.response, ...problemResponses(400, 401, 403, 404, 503) },
    },
  }
}

export const ProjectQuery = { project_id: Type.String({ description: 'the project to read; 404 unless it is a live project of your organisation' }) }

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const IsoTime = (description?: string) => Type.String({ format: 'date-time', description })

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
  if (!position || !Number.isInteger(position[0]) || Number(position[0]) < 0) throw badQuery('cursor', 'is not a cursor this portal returned')
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
  /** the columns that make a group, in their sort order after the latest event's time */
  groupBy: string[]
  /** more conditions on the events counted (filters, a time range) */
  narrow?: (query: SelectQueryBuilder<any, any, any>) => SelectQueryBuilder<any, any, any>
  limit?: number
  cursor?: string
}

/**
 * One row per group of a project's events, the most recently active group first, each with its
 * latest event (by `ts`, then id) and its event count. Two indexed queries: the groups, then the
 * latest event of each group on the page.
 */
export async function latestPerGroup(ctx: PortalContext, spec: GroupQuery): Promise<Page<GroupState>> {
  const db = moduleDb(ctx)
  const limit = spec.limit ?? DEFAULT_LIMIT
  const offset = summaryOffset(spec.cursor)
  const narrow = spec.narrow ?? ((query) => query)
  let groupsQuery = narrow(
    db
      .selectFrom(spec.table)
      .select((eb) => [...spec.groupBy, eb.fn.countAll().as('events'), eb.fn.max('ts').as('last_ts'), eb.fn.min('ts').as('first_ts')])
      .where('project_id', '=', spec.projectId),
  )
    .groupBy(spec.groupBy)
    .orderBy('last_ts', 'desc')
  for (const column of spec.groupBy) groupsQuery = groupsQuery.orderBy(column, 'asc')
  const groups = await groupsQuery.limit(limit + 1).offset(offset).execute()
  const more = groups.length > limit
  const shown = more ? groups.slice(0, limit) : groups
  if (shown.length === 0) return { data: [], nextCursor: null }

  const latestRows = await narrow(
    db
      .selectFrom(spec.table)
      .select(['id', 'ts', 'data', ...spec.groupBy])
      .where('project_id', '=', spec.projectId)
      .where((eb) =>
        eb.or(
          shown.map((group) =>
            eb.and([...spec.groupBy.map((column) => (group[column] === null ? eb(column, 'is', null) : eb(column, '=', group[column]))), eb('ts', '=', group.last_ts)]),
          ),
        ),
      ),
  )
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .execute()
  const latestByKey = new Map<string, (typeof latestRows)[number]>()
  for (const row of latestRows) {
    const key = groupKey(spec.groupBy, row)
    if (!latestByKey.has(key)) latestByKey.set(key, row)
  }

  const data = shown.map((group) => {
    const latest = latestByKey.get(groupKey(spec.groupBy, group))!
    return {
      key: Object.fromEntries(spec.groupBy.map((column) => [column, group[column] as string | null])),
      events: Number(group.events),
      firstTs: Number(group.first_ts),
      lastTs: Number(group.last_ts),
      latest: { id: latest.id, ts: Number(latest.ts), data: ctx.storage.parseJson<Record<string, unknown>>(latest.data) },
    }
  })
  return { data, nextCursor: more ? encodeCursor([offset + limit]) : null }
}

function groupKey(columns: string[], row: Record<string, unknown>): string {
  return JSON.stringify(columns.map((column) => row[column] ?? null))
}

/** A page of summary rows mapped to their response items. */
export function mapPage<T, U>(page: Page<T>, map: (item: T) => U): Page<U> {
  return { data: page.data.map(map), nextCursor: page.nextCursor }
}

export interface HistoryEvent {
  id: string
  ts: number
  data: Record<string, unknown>
}

/** One group's events (a flag's changes, a job's statuses), newest first, paged like the events list. */
export async function groupHistory(
  ctx: PortalContext,
  spec: { table: string; projectId: string; column: string; value: string; limit?: number; cursor?: string },
): Promise<Page<HistoryEvent>> {
  const limit = spec.limit ?? DEFAULT_LIMIT
  const query = moduleDb(ctx).selectFrom(spec.table).select(['id', 'ts', 'data']).where('project_id', '=', spec.projectId).where(spec.column, '=', spec.value)
  const rows = await pageAfter(query, spec.cursor, limit, 'ts', 'id').execute()
  return toPage(rows, limit, (row) => [Number(row.ts), row.id], (row) => ({ id: row.id, ts: Number(row.ts), data: ctx.storage.parseJson<Record<string, unknown>>(row.data) }))
}

/**
 * The latest value of a payload field that not every event repeats (a job's artifact URL, a tenant's
 * limit), per group, for the groups of one page.
 */
export async function latestKnownValues(
  ctx: PortalContext,
  spec: { table: string; projectId: string; column: string; values: string[]; field: string },
): Promise<Map<string, unknown>> {
  const known = new Map<string, unknown>()
  if (spec.values.length === 0) return known
  const rows = await moduleDb(ctx)
    .selectFrom(spec.table)
    .select([spec.column, 'data'])
    .where('project_id', '=', spec.projectId)
    .where(spec.column, 'in', spec.values)
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
