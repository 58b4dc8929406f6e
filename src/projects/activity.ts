import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { named } from '../http/openapi-components.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { isoTime } from '../ids.ts'
import { modules } from '../modules/registry.ts'
import type { EventTablesByName } from '../modules/module.ts'
import { moduleDb } from '../modules/read-route.ts'
import { tablesOf } from '../storage/tables.ts'

const DAY_MS = 24 * 60 * 60 * 1000
/** Error occurrences live in the errors module's own table, beside the registry's event tables. */
const ERROR_TABLE = { type: 'error', table: 'error_occurrences' }

const TypeActivity = Type.Object({
  eventsLast24h: Type.Integer({ description: 'events with `ts` in the last 24 hours' }),
  lastEventAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'the newest event’s `ts`' }),
})

export const ProjectActivity = named(
  'ProjectActivity',
  Type.Object(
    {
      projectId: Type.String({ description: 'prj_…' }),
      ...TypeActivity.properties,
      types: Type.Record(Type.String(), TypeActivity, { description: 'by event type (`error` for error occurrences); types without any event are left out. `audit` holds the portal’s own management actions too (project and key created…), so a project that never received an event of its own has only `audit`' }),
    },
    { description: 'How much a project received lately, in total and by event type.' },
  ),
)

/**
 * Events in the last 24 h and the latest event per project, for the projects list and a project's first page.
 * Per event table, one index step per project for its latest event and one index range for its last 24 h.
 */
export const projectActivityRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = moduleDb<EventTablesByName>(ctx)
  app.get(
    '/api/projects/activity',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listProjectActivity',
        tags: ['projects'],
        summary: 'Events in the last 24 h and the latest event time of the projects named, in total and by event type',
        description: '404 when a project named is not a live project of your organisation, as for every read of a project.',
        querystring: Type.Object(
          { project_id: Type.Array(Type.String({ description: 'prj_…' }), { minItems: 1, maxItems: 100, description: 'the projects, repeated: `?project_id=a&project_id=b`' }) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(ProjectActivity) }), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const live = await db
        .selectFrom('projects')
        .select('id')
        .where('org_id', '=', accessPrincipal(request).orgId)
        .where('deleted_at', 'is', null)
        .where('id', 'in', [...new Set(request.query.project_id)])
        .execute()
      const ids = live.map((row) => row.id)
      const missing = request.query.project_id.find((id) => !ids.includes(id))
      if (missing !== undefined) throw new ProblemError(404, 'not_found', `project ${missing} was not found`)
      const since = Date.now() - DAY_MS
      const tables = [...modules.map((module) => ({ type: module.type, table: module.table })), ERROR_TABLE]
      const activity = new Map(ids.map((id) => [id, { projectId: id, eventsLast24h: 0, lastEventAt: null as string | null, types: {} as Record<string, { eventsLast24h: number; lastEventAt: string | null }> }]))
      await Promise.all(
        tables.map(async ({ type, table }) => {
          // The table's own store (DuckDB holds the columnar modules' events), which has no projects table.
          const events = tablesOf<EventTablesByName>(ctx.storage.eventsOf(table).db)
          const [latest, recent] = await Promise.all([
            // One index step per project: grouped by project_id, max(ts) would read every event of the project.
            events
              .selectNoFrom((eb) => ids.map((id, i) => eb.selectFrom(table).select((inner) => inner.fn.max('ts').as('ts')).where('project_id', '=', id).as(`last${i}`)))
              .executeTakeFirstOrThrow() as Promise<Record<string, number | null>>,
            events.selectFrom(table).select((eb) => ['project_id', eb.fn.countAll().as('events')]).where('project_id', 'in', ids).where('ts', '>=', since).groupBy('project_id').execute(),
          ])
          const counts = new Map(recent.map((row) => [row.project_id as string, Number(row.events)]))
          for (const [i, id] of ids.entries()) {
            const last = latest[`last${i}`]
            if (last === null) continue
            const project = activity.get(id)!
            const lastEventAt = isoTime(Number(last))!
            const eventsLast24h = counts.get(id) ?? 0
            project.types[type] = { eventsLast24h, lastEventAt }
            project.eventsLast24h += eventsLast24h
            if (project.lastEventAt === null || lastEventAt > project.lastEventAt) project.lastEventAt = lastEventAt
          }
        }),
      )
      return { data: [...activity.values()] }
    },
  )
}
