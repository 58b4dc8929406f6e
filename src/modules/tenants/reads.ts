import { Type, type Static } from 'typebox'
import { List, PageQuery } from '../../http/list.ts'
import type { PortalContext } from '../../context.ts'
import {
  IsoTime,
  Nullable,
  ProjectQuery,
  groupWithHistory,
  isoFromMs,
  latestKnownValues,
  latestPerGroup,
  mapPage,
  moduleReads,
  readRoute,
  requireReadableProject,
  summaryOf,
  type GroupState,
  type HistoryEvent,
} from '../module-reads.ts'
import type { TenantPayload } from './payload.ts'

type TenantData = Static<typeof TenantPayload>

const TABLE = 'tenant_events'

const PlanChange = Type.Object({ eventId: Type.String(), changedAt: IsoTime(), plan: Type.String(), ingestLimitPerSecond: Nullable(Type.Integer()) })

const TenantPlan = Type.Object({
  projectId: Type.String({ description: 'the project the plan is for (the event’s `projectId`, else the sending project)' }),
  plan: Type.String({ description: 'from the latest event' }),
  ingestLimitPerSecond: Nullable(Type.Integer({ description: 'the latest limit any event gave; null when none did (the install’s limit holds)' })),
  updatedAt: IsoTime('time of the latest event'),
  changes: Type.Integer(),
  eventId: Type.String({ description: 'the latest event' }),
})

const TenantDetail = Type.Object({ ...TenantPlan.properties, history: List(PlanChange) })

/** Plans with the latest per-second limit, which an event that changes only the plan does not repeat. */
async function plansOf(ctx: PortalContext, projectId: string, groups: GroupState[]) {
  const tenants = groups.map((group) => String(group.key.tenant_project_id))
  const limits = await latestKnownValues(ctx, { table: TABLE, projectId, column: 'tenant_project_id', groups, field: 'ingestLimitPerSecond' })
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
  app.get(
    '/plans',
    readRoute({
      tag: 'tenants',
      summary: 'Each tenant’s current plan and per-second ingest limit, as reported by the project’s tenant events',
      query: { ...ProjectQuery, ...PageQuery },
      response: List(TenantPlan),
    }),
    async (request) => {
      const { project_id: projectId, limit, cursor } = request.query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, { table: TABLE, projectId, summary: summaryOf(module, 'plans'), limit, cursor })
      return { data: await plansOf(ctx, projectId, page.data), nextCursor: page.nextCursor }
    },
  )

  app.get(
    '/plans/:tenantId',
    readRoute({
      tag: 'tenants',
      summary: 'One tenant’s current plan and limit, and its history newest first',
      description: '`tenantId` is the project id the tenant events describe. `limit` and `cursor` page the history.',
      params: { tenantId: Type.String() },
      query: { ...ProjectQuery, ...PageQuery },
      response: TenantDetail,
    }),
    async (request) => {
      const { project_id: projectId, limit, cursor } = request.query
      const { tenantId } = request.params
      await requireReadableProject(ctx, request, projectId)
      const summary = summaryOf(module, 'plans')
      const { state, history } = await groupWithHistory(ctx, { table: TABLE, projectId, summary, column: 'tenant_project_id', value: tenantId, what: `tenant ${tenantId}`, limit, cursor })
      const [plan] = await plansOf(ctx, projectId, [state])
      return { ...plan, history: mapPage(history, planChange) }
    },
  )
})
