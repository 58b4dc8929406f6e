import { Type } from 'typebox'
import { sql } from 'kysely'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { named } from '../http/openapi-components.ts'
import { problemResponses } from '../http/problem.ts'
import { isoTime } from '../ids.ts'
import { findProject } from '../projects/store.ts'
import { AttemptStatusSchema } from './schemas.ts'
import { webhookDb } from './tables.ts'

const DAY_MS = 24 * 60 * 60 * 1000

export const EndpointHealth = named(
  'EndpointHealth',
  Type.Object(
    {
      endpointId: Type.String({ description: 'whe_…' }),
      attempts: Type.Integer({ description: 'finished attempts in the window (in_progress ones are left out)' }),
      succeeded: Type.Integer({ description: 'attempts answered with a 2xx' }),
      successRate: Type.Number({ description: 'succeeded / attempts, 0–1, 4 decimal places' }),
      lastAttemptAt: Type.String({ format: 'date-time' }),
      lastAttemptStatus: AttemptStatusSchema,
      lastStatusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'the HTTP status of the latest attempt; null when nothing answered' }),
    },
    { description: 'How an endpoint’s recent attempts went; `failingSince` on the endpoint says how long it has been failing.' },
  ),
)

/** Health per endpoint for the endpoints list: one grouped read over the attempts of the window, never a read per endpoint. */
export const endpointHealthRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = webhookDb(ctx.storage)
  app.get(
    '/endpoint-health',
    {
      config: { access: 'read' },
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookEndpointHealth',
        summary: 'Success rate and latest outcome of each endpoint’s attempts, over the last 24 h unless `from` says otherwise',
        description: 'One row per endpoint with a finished attempt in the window, most recently attempted first; endpoints without one are left out.',
        querystring: Type.Object(
          {
            project_id: Type.String({ description: 'the project (prj_…)' }),
            from: Type.Optional(Type.String({ format: 'date-time', description: 'attempts started at or after; default 24 h ago' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(EndpointHealth) }), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { project_id: projectId, from } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const since = from === undefined ? Date.now() - DAY_MS : Date.parse(from)
      const finished = db
        .selectFrom('webhook_attempts')
        .where('project_id', '=', projectId)
        .where('started_at', '>=', since)
        .where('status', '!=', 'in_progress')
      const stats = await finished
        .select((eb) => [
          'endpoint_id',
          eb.fn.countAll().as('attempts'),
          sql<number>`sum(case when status = 'succeeded' then 1 else 0 end)`.as('succeeded'),
          eb.fn.max('started_at').as('last_at'),
        ])
        .groupBy('endpoint_id')
        .execute()
      if (stats.length === 0) return { data: [] }
      // the latest attempt of each endpoint: its (endpoint, started_at) pairs, read in one query
      const latest = await finished
        .select(['endpoint_id', 'started_at', 'number', 'status', ctx.storage.jsonText('response', 'statusCode').as('status_code')])
        .where((eb) => eb.or(stats.map((row) => eb.and([eb('endpoint_id', '=', row.endpoint_id), eb('started_at', '=', Number(row.last_at))]))))
        .execute()
      const latestOf = new Map<string, (typeof latest)[number]>()
      for (const row of latest) {
        const kept = latestOf.get(row.endpoint_id)
        if (!kept || row.number > kept.number) latestOf.set(row.endpoint_id, row)
      }
      const data = stats
        .map((row) => {
          const last = latestOf.get(row.endpoint_id)!
          const attempts = Number(row.attempts)
          const succeeded = Number(row.succeeded)
          return {
            endpointId: row.endpoint_id,
            attempts,
            succeeded,
            successRate: Math.round((succeeded / attempts) * 10_000) / 10_000,
            lastAttemptAt: isoTime(Number(row.last_at))!,
            lastAttemptStatus: last.status,
            lastStatusCode: last.status_code === null ? null : Number(last.status_code),
          }
        })
        .sort((a, b) => b.lastAttemptAt.localeCompare(a.lastAttemptAt))
      return { data }
    },
  )
}
