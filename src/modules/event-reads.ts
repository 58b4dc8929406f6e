import { Type, type TProperties } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { List, PageQuery, TimeRangeQuery, afterCursor, pageAfter, queryTime, toPage, DEFAULT_LIMIT } from '../http/list.ts'
import { problemResponses } from '../http/problem.ts'
import { encodeCursor, isoTime } from '../ids.ts'
import { findProject } from '../projects/store.ts'
import { readProjectRetentions, retentionDays } from '../retention/policy.ts'
import type { EventModule, EventTablesByName, FilterValue, TablesByName } from './module.ts'
import { named, pascalCase } from '../http/openapi-components.ts'

const moduleStatusFields = {
  module: Type.String(),
  eventType: Type.String(),
  status: Type.Literal('ok'),
  projectId: Type.Optional(Type.String()),
  events: Type.Optional(Type.Integer({ description: 'events stored for project_id' })),
  lastEventAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  summaries: Type.Optional(Type.Record(Type.String(), Type.Integer(), { description: 'with project_id: how many flags, jobs, paths, … the module’s summaries hold' })),
  sizeBytes: Type.Integer({
    description: 'bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size)',
  }),
  oldestEventAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'the oldest event stored: of project_id, or of the organisation’s projects' }),
  retentionDays: Type.Integer({ description: 'days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why)' }),
}

/**
 * How many events one page looks through when a filter no index serves (`q`, `field.*`) narrows it.
 * A search for something rare then answers in bounded time, with a page that may hold fewer than
 * `limit` events (even none) and a `nextCursor` that goes on searching where this page stopped, the
 * way log tools search a long range in slices rather than holding a request for a full scan.
 */
export const SCAN_WINDOW = 20_000

/** The `events` read's query once its schema has checked it: the common parameters, and the module's filters by name. */
type EventsQuery = { project_id: string; limit?: number; cursor?: string; from?: string; to?: string; [filter: string]: FilterValue | undefined }

/** The two reads every module serves (DESIGN: Module reads): its status and its newest-first events. */
export function eventReads(module: EventModule): FastifyPluginAsyncTypebox<{ ctx: PortalContext }> {
  const filterQuery: TProperties = {}
  for (const [name, filter] of Object.entries(module.filters)) filterQuery[name] = Type.Optional(filter.schema)
  const patternFilters = (module.patternFilters ?? []).map((filter) => ({ ...filter, regex: new RegExp(filter.pattern) }))
  const patternQuery = Object.fromEntries(patternFilters.map((filter) => [filter.pattern, filter.schema]))
  const scanningFilterNames = [
    ...Object.entries(module.filters)
      .filter(([, filter]) => filter.scans)
      .map(([name]) => `\`${name}\``),
    ...patternFilters.map((filter) => `\`${filter.pattern}\``),
  ]
  const StoredEventSchema = named(
    `${pascalCase(module.type)}Event`,
    Type.Object(
      {
        id: Type.String({ description: 'evt_… event id' }),
        projectId: Type.String({ description: 'prj_… project the event was ingested for' }),
        type: Type.Literal(module.type),
        ts: Type.String({ format: 'date-time', description: 'when it happened, as sent in `ts`' }),
        receivedAt: Type.String({ format: 'date-time', description: 'when the portal received it' }),
        data: module.payload,
      },
      { description: `A stored \`${module.type}\` event.` },
    ),
  )
  const tags = [module.name]
  const ModuleStatus = named(`${pascalCase(module.name)}ModuleStatus`, Type.Object({ ...moduleStatusFields, ...module.status?.schema }))

  return async (app, { ctx }) => {
    // The module's events, from its event store; the summaries are state, in `ctx.storage.db`.
    const store = ctx.storage.eventsOf(module.table)
    const db = store.db.withTables<EventTablesByName>()
    const stateDb = ctx.storage.db.withTables<TablesByName>()

    async function summaryCounts(projectId: string) {
      const summaries = Object.entries(module.summaries ?? {})
      if (summaries.length === 0) return {}
      const counts = await Promise.all(
        summaries.map(async ([name, summary]) => {
          const row = await stateDb.selectFrom(summary.table).select((eb) => eb.fn.countAll().as('rows')).where('project_id', '=', projectId).executeTakeFirstOrThrow()
          return [name, Number(row.rows)] as const
        }),
      )
      return { summaries: Object.fromEntries(counts) }
    }

    const sizedTables = [module.table, ...Object.values(module.summaries ?? {}).map((summary) => summary.table), ...(module.retention?.expiring ?? []).map((rows) => rows.table)]

    /** Size, oldest event and retention: per project, each oldest event is one step down the (project, time) index. */
    async function storageStatus(orgId: string, projectId: string | undefined) {
      const projectIds =
        projectId !== undefined ? [projectId] : (await ctx.storage.db.selectFrom('projects').select('id').where('org_id', '=', orgId).where('deleted_at', 'is', null).execute()).map((row) => row.id)
      const [sizes, oldest, settings] = await Promise.all([
        ctx.storage.space.tableSizes(sizedTables),
        Promise.all(projectIds.map((id) => db.selectFrom(module.table).select((eb) => eb.fn.min('ts').as('first')).where('project_id', '=', id).executeTakeFirst())),
        projectId === undefined ? undefined : readProjectRetentions(ctx.storage.db, projectId),
      ])
      const firsts = oldest.map((row) => row?.first).filter((first) => first !== null && first !== undefined).map(Number)
      return {
        sizeBytes: Object.values(sizes).reduce((sum, bytes) => sum + bytes, 0),
        oldestEventAt: firsts.length === 0 ? null : isoTime(Math.min(...firsts)),
        retentionDays: retentionDays(ctx.config, module, projectId === undefined ? undefined : settings?.get(projectId)).days,
      }
    }

    app.get(
      '/status',
      {
        config: { access: 'read' },
        schema: {
          operationId: `get${pascalCase(module.name)}Status`,
          tags,
          summary: `${module.name} module health, size on disk, oldest event and retention; with project_id, that project's event count, latest and oldest event`,
          description: `Whether the ${module.name} module can read its table, its size on disk, oldest event and retention. With \`project_id\`, also the project’s \`${module.type}\` event count, latest and oldest event time.`,
          querystring: Type.Object(
            { project_id: Type.Optional(Type.String({ description: 'a project (prj_…) to count events of; 404 unless it is a live project of your organisation' })) },
            { additionalProperties: false },
          ),
          response: { 200: ModuleStatus, ...problemResponses(400, 401, 403, 404, 503) },
        },
      },
      async (request) => {
        const projectId = request.query.project_id
        const orgId = accessPrincipal(request).orgId
        if (projectId !== undefined) await findProject(ctx.storage.db, orgId, projectId)
        const status = {
          module: module.name,
          eventType: module.type,
          status: 'ok' as const,
          ...(await module.status?.read(ctx, projectId)),
          ...(await storageStatus(orgId, projectId)),
        }
        if (projectId === undefined) {
          await db.selectFrom(module.table).select('id').limit(1).execute()
          return status
        }
        const row = await db
          .selectFrom(module.table)
          .select((eb) => [eb.fn.countAll<number>().as('events'), eb.fn.max('ts').as('last')])
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow()
        return { ...status, projectId, events: Number(row.events), lastEventAt: isoTime(row.last === null ? null : Number(row.last)), ...(await summaryCounts(projectId)) }
      },
    )

    app.get(
      '/events',
      {
        config: { access: 'read' },
        schema: {
          operationId: `list${pascalCase(module.type)}Events`,
          tags,
          summary: `${module.name} events of a project, newest first`,
          // OpenAPI parameters cannot be named by a pattern; the description carries them instead.
          description:
            [
              ...patternFilters.map((filter) => (filter.schema as { description?: string }).description),
              scanningFilterNames.length > 0 &&
                `${scanningFilterNames.join(', ')}: no index serves these, so a page looks through at most ${SCAN_WINDOW.toLocaleString('en')} events; ` +
                  'it may hold fewer than `limit` events, even none, while `nextCursor` is set: follow it to search on.',
            ]
              .filter(Boolean)
              .join(' ') || `The project’s \`${module.type}\` events as stored, newest first by \`ts\`, filtered by the parameters below and paged by \`cursor\`.`,
          querystring: Type.Object(
            { project_id: Type.String({ description: 'the project to read (prj_…); 404 unless it is a live project of your organisation' }), ...PageQuery, ...TimeRangeQuery, ...filterQuery },
            { additionalProperties: false, ...(patternFilters.length ? { patternProperties: patternQuery } : {}) },
          ),
          response: { 200: List(StoredEventSchema), ...problemResponses(400, 401, 403, 404, 503) },
        },
      },
      async (request) => {
        const { project_id: projectId, limit = DEFAULT_LIMIT, cursor, from, to, ...filters } = request.query as EventsQuery
        await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
        // The page's queries on one connection: DuckDB's read barrier (docs/event-store.md) is passed once for them
        // all, not before each of the four a search makes, each of which waited for a materialiser pass under ingest.
        return store.db.connection().execute(async (connection) => {
          const db = connection.withTables<EventTablesByName>()
          let events = db.selectFrom(module.table).where('project_id', '=', projectId)
          const fromMs = queryTime(from)
          const toMs = queryTime(to)
          if (toMs !== undefined) events = events.where('ts', '<', toMs)
          const inRange = fromMs === undefined ? events : events.where('ts', '>=', fromMs)
          const scans = Object.entries(filters).some(
            ([name, value]) => value !== undefined && (module.filters[name] ? module.filters[name].scans === true : patternFilters.some((pattern) => pattern.regex.test(name))),
          )
          // A filter no index serves looks through the next SCAN_WINDOW events only; the (project, time) index finds where they end.
          const windowEnd = scans ? await store.nthNewest(afterCursor(inRange, cursor, 'ts', 'id'), SCAN_WINDOW) : undefined
          // The window's end lies within the range, so it replaces `from` as the lower bound: given both, SQLite
          // bounds its index walk by `from` and reads the whole range (64 ms a page for one day of 10M logs).
          // Its time alone as well, which a columnar store prunes row groups by (DuckDB: 1,043 → 6.5 ms at 10M).
          let query = (windowEnd ? events.where('ts', '>=', windowEnd.ts).where(sql<boolean>`(ts, id) >= (${windowEnd.ts}, ${windowEnd.id})`) : inRange).select(['id', 'project_id', 'ts', 'received_at', 'data'])
          for (const [name, value] of Object.entries(filters)) {
            if (value === undefined) continue
            const filter = module.filters[name]
            if (filter) {
              query = filter.apply(query, value, store)
              continue
            }
            for (const pattern of patternFilters) {
              const match = pattern.regex.exec(name)
              if (match) query = pattern.apply(query, match[1], value, store)
            }
          }
          const rows = await pageAfter(query.select(store.dataColumns), cursor, limit, 'ts', 'id').execute()
          const page = toPage(rows, limit, (row) => [Number(row.ts), row.id], (row) => ({
            id: row.id,
            projectId: row.project_id,
            type: module.type,
            ts: new Date(Number(row.ts)).toISOString(),
            receivedAt: new Date(Number(row.received_at)).toISOString(),
            data: store.dataOf(row),
          }))
          // A page that ran out of window before it filled: the next one searches on from the window's end.
          return windowEnd && rows.length <= limit ? { ...page, nextCursor: encodeCursor([Number(windowEnd.ts), windowEnd.id]) } : page
        })
      },
    )
  }
}
