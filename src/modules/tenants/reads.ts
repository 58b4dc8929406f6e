import { Type, type Static } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import type { PortalContext } from '../../context.ts'
import { IsoTime, Nullable, moduleReads } from '../read-route.ts'
import { isoFromMs } from '../time-window.ts'
import { latestKnownValues, type GroupState } from '../latest-per-group.ts'
import { groupDetailRoute, groupListRoute, type HistoryEvent } from '../group-routes.ts'
import type { TenantPayload } from './payload.ts'

type TenantData = Static<typeof TenantPayload>

const PlanChange = named('TenantPlanChange', Type.Object({ eventId: Type.String(), changedAt: IsoTime(), plan: Type.String(), ingestLimitPerSecond: Nullable(Type.Integer()) }))

const TenantPlan = named('TenantPlan', Type.Object({
  projectId: Type.String({ description: 'the project the plan is for (the event’s `projectId`, else the sending project)' }),
  plan: Type.String({ description: 'from the latest event' }),
  ingestLimitPerSecond: Nullable(Type.Integer({ description: 'the latest limit any event gave; null when none did (the install’s limit holds)' })),
  updatedAt: IsoTime('time of the latest event'),
  changes: Type.Integer(),
  eventId: Type.String({ description: 'the latest event' }),
}))

/** Plans with the latest per-second limit, which an event that changes only the plan does not repeat. */
async function plansOf(ctx: PortalContext, projectId: string, groups: GroupState[]) {
  const limits = await latestKnownValues(ctx, { table: 'tenant_events', projectId, column: 'tenant_project_id', groups, field: 'ingestLimitPerSecond', fieldColumn: 'ingest_limit_per_second' })
  return groups.map((group) => {
    const tenant = String(group.key.tenant_project_id)
    return {
      projectId: tenant,
      plan: (group.latest.data as TenantData).plan,
      ingestLimitPerSecond: (limits.get(tenant) as number | undefined) ?? null,
      updatedAt: isoFromMs(group.latest.ts),
      changes: group.events,
      eventId: group.latest.id,
    }
  })
}

function planChange(event: HistoryEvent) {
  const data = event.data as TenantData
  return { eventId: event.id, changedAt: isoFromMs(event.ts), plan: data.plan, ingestLimitPerSecond: data.ingestLimitPerSecond ?? null }
}

export const tenantReads = moduleReads((app, ctx, module) => {
  const plans = { path: '/plans', groupSummary: 'plans', item: TenantPlan, itemsOf: (groups: GroupState[], projectId: string) => plansOf(ctx, projectId, groups) }
  groupListRoute(app, ctx, module, {
    ...plans,
    operationId: 'listTenantPlans',
    summary: 'Each tenant’s current plan and per-second ingest limit, as reported by the project’s tenant events',
    description: 'One row per tenant a `tenant` event described; one tenant’s history: `GET /api/tenants/plans/{tenantId}`.',
  })
  groupDetailRoute(app, ctx, module, {
    ...plans,
    param: 'tenantId',
    what: 'tenant',
    operationId: 'getTenantPlan',
    summary: 'One tenant’s current plan and limit, and its history newest first',
    description: '`tenantId` is the project id the tenant events describe. `limit` and `cursor` page the history.',
    event: PlanChange,
    eventOf: planChange,
  })
})
