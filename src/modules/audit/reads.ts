import { Type, type Static } from 'typebox'
import { IsoTime, Nullable, moduleReads } from '../read-route.ts'
import { isoFromMs, TimeWindowQuery } from '../time-window.ts'
import { eventConditions, type GroupState } from '../latest-per-group.ts'
import { groupListRoute } from '../group-routes.ts'
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

function actor(group: GroupState) {
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
}

export const auditReads = moduleReads((app, ctx, module) => {
  groupListRoute(app, ctx, module, {
    path: '/actors',
    groupSummary: 'actors',
    item: Actor,
    itemsOf: (groups) => groups.map(actor),
    operationId: 'listAuditActors',
    summary: 'Who acted: each actor with their action count and latest action, most recently active first',
    description: 'What one actor did, newest first: `GET /api/modules/audit/events?actor=…`.',
    filters: {
      action: Type.Optional(Type.String({ description: 'only events with this action' })),
      resource: Type.Optional(Type.String({ description: 'only events on this resource' })),
      ...TimeWindowQuery('events'),
    },
    select: ({ action, resource, from, to }) => ({ window: { from, to }, narrow: eventConditions({ action, resource }) }),
  })
})
