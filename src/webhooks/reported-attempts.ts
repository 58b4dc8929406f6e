import { Type } from 'typebox'
import { sql, type SelectQueryBuilder } from 'kysely'
import { named } from '../http/openapi-components.ts'
import type { Database } from '../storage/tables.ts'
import type { WebhookTables } from './tables.ts'
import { IsoTime, Nullable, ProjectQuery, eventsDb, moduleReads, readRoute, requireReadableProject } from '../modules/read-route.ts'
import { isoFromMs, withinTimeRange } from '../modules/time-window.ts'

/** A reported attempt's destination: its name, else its URL. */
const DESTINATION = sql<string>`coalesce(destination, url)`

const ReportedDestination = named('ReportedDestination', Type.Object({
  destination: Type.String({ description: 'the attempts’ `destination`, else their URL' }),
  url: Type.String({ description: 'URL of the latest attempt' }),
  attempts: Type.Integer(),
  succeeded: Type.Integer({ description: 'attempts with a 2xx status code' }),
  failed: Type.Integer({ description: 'every other attempt, including those reported without a status code' }),
  successRate: Type.Number({ description: 'succeeded / attempts, 0–1, 4 decimal places' }),
  lastAttemptAt: IsoTime(),
  lastStatusCode: Nullable(Type.Integer()),
}))

/** `webhook` events: delivery attempts that integrations report, summarised per destination. */
export const reportedAttemptReads = moduleReads((app, ctx) => {
  app.get(
    '/reported-attempts',
    readRoute({
      tag: 'webhooks',
      operationId: 'listReportedWebhookAttempts',
      summary: 'Reported delivery attempts (`webhook` events) per destination, with success rate',
      description: 'Every destination with an attempt in the window, most recently attempted first. The attempts themselves: `GET /api/webhooks/events`.',
      query: {
        ...ProjectQuery,
        destination: Type.Optional(Type.String({ description: 'one destination (its name, or its URL when it has none)' })),
        from: Type.Optional(IsoTime('attempts at or after')),
        to: Type.Optional(IsoTime('attempts before')),
      },
      response: named('ReportedDestinations', Type.Object({ data: Type.Array(ReportedDestination) })),
    }),
    async (request) => {
      const { project_id: projectId, destination, from, to } = request.query
      await requireReadableProject(ctx, request, projectId)
      const db = eventsDb<WebhookTables>(ctx, 'webhook_events')
      const narrow = <O>(query: SelectQueryBuilder<Database & WebhookTables, 'webhook_events', O>) => {
        const inWindow = withinTimeRange(query.where('project_id', '=', projectId), from, to)
        return destination === undefined ? inWindow : inWindow.where(DESTINATION, '=', destination)
      }
      // Grouped by the indexed columns, then merged by destination: the index serves the grouping.
      const rows = await narrow(
        db
          .selectFrom('webhook_events')
          .select((eb) => [
            'destination',
            'url',
            eb.fn.countAll().as('attempts'),
            sql<number>`sum(case when status_code between 200 and 299 then 1 else 0 end)`.as('succeeded'),
            eb.fn.max('ts').as('last_ts'),
          ])
          .groupBy(['destination', 'url']),
      ).execute()
      const byDestination = new Map<string, { destination: string; attempts: number; succeeded: number; last_ts: number }>()
      for (const row of rows) {
        const name = (row.destination ?? row.url) as string
        const group = byDestination.get(name) ?? byDestination.set(name, { destination: name, attempts: 0, succeeded: 0, last_ts: 0 }).get(name)!
        group.attempts += Number(row.attempts)
        group.succeeded += Number(row.succeeded)
        group.last_ts = Math.max(group.last_ts, Number(row.last_ts))
      }
      const groups = [...byDestination.values()]
      if (groups.length === 0) return { data: [] }

      const latestRows = await narrow(
        db
          .selectFrom('webhook_events')
          .select([DESTINATION.as('destination'), 'url', 'status_code'])
          // the latest times first, so that the (project, time) index finds the few candidate rows
          .where('ts', 'in', [...new Set(groups.map((group) => group.last_ts))])
          .where((eb) => eb.or(groups.map((group) => eb.and([eb(DESTINATION, '=', group.destination), eb('ts', '=', group.last_ts)])))),
      )
        .orderBy('ts', 'desc')
        .orderBy('id', 'desc')
        .execute()
      const latest = new Map<string, (typeof latestRows)[number]>()
      for (const row of latestRows) if (!latest.has(row.destination)) latest.set(row.destination, row)

      const data = groups.map((group) => {
        const { attempts, succeeded } = group
        const last = latest.get(group.destination)!
        return {
          destination: group.destination,
          url: last.url as string,
          attempts,
          succeeded,
          failed: attempts - succeeded,
          successRate: Math.round((succeeded / attempts) * 1e4) / 1e4,
          lastAttemptAt: isoFromMs(group.last_ts),
          lastStatusCode: (last.status_code as number | null) ?? null,
        }
      })
      return { data: data.sort((a, b) => b.lastAttemptAt.localeCompare(a.lastAttemptAt) || a.destination.localeCompare(b.destination)) }
    },
  )
})
