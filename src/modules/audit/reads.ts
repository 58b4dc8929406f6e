import { Type, type Static } from 'typebox'
import { List, PageQuery } from '../../http/list.ts'
import { IsoTime, Nullable, ProjectQuery, eventConditions, isoFromMs, latestPerGroup, mapPage, moduleReads, readRoute, requireReadableProject, summaryOf } from '../module-reads.ts'
import type { AuditPayload } from './payload.ts'

type AuditData = Static<typeof AuditPayload>

const Actor = Type.Object({
  actor: Type.String(),
  actions: Type.Integer({ description: 'audit events in the window' }),
  firstSeenAt: IsoTime(),
  lastSeenAt: IsoTime(),
  lastAction: Nullable(Type.String()),
  lastResource: Nullable(Type.String()),
  lastStatusCode: Nullable(Type.Integer()),
  eventId: Type.String({ description: 'the latest event' }),
})

export const auditReads = moduleReads((app, ctx, module) => {
  app.get(
    '/actors',
    readRoute({
      tag: 'audit',
      summary: 'Who acted: each actor with their action count and latest action, most recently active first',
      description: 'What one actor did, newest first: `GET /api/modules/audit/events?actor=…`.',
      query: {
        ...ProjectQuery,
        action: Type.Optional(Type.String({ description: 'only events with this action' })),
        resource: Type.Optional(Type.String({ description: 'only events on this resource' })),
        from: Type.Optional(IsoTime('events at or after')),
        to: Type.Optional(IsoTime('events before')),
        ...PageQuery,
      },
      response: List(Actor),
    }),
    async (request) => {
      const { project_id: projectId, action, resource, from, to, limit, cursor } = request.query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, {
        table: 'audit_events',
        projectId,
        summary: summaryOf(module, 'actors'),
        narrow: eventConditions({ action, resource }, from, to),
        limit,
        cursor,
      })
      return mapPage(page, (group) => {
        const data = group.latest.data as AuditData
        return {
          actor: String(group.key.actor),
          actions: group.events,
          firstSeenAt: isoFromMs(group.firstTs),
          lastSeenAt: isoFromMs(group.lastTs),
          lastAction: data.action ?? null,
          lastResource: data.resource ?? null,
          lastStatusCode: data.statusCode ?? null,
          eventId: group.latest.id,
        }
      })
    },
  )
})
