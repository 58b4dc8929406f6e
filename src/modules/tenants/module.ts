import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { TenantPayload, tenantExamples } from './payload.ts'
import { tenantMigrations } from './migrations.ts'
import { tenantReads } from './reads.ts'
import { tenantSignals } from './signals.ts'

export const tenantsModule = defineModule({
  type: 'tenant',
  name: 'tenants',
  basePath: '/api/tenants',
  payload: TenantPayload,
  examples: tenantExamples,
  table: 'tenant_events',
  columnar: true,
  migrations: tenantMigrations,
  columns: (d, event) => ({ tenant_project_id: d.projectId ?? event.projectId, plan: d.plan, ingest_limit_per_second: d.ingestLimitPerSecond ?? null }),
  filters: {
    plan: columnEquals('plan', Type.String()),
    tenant: columnEquals('tenant_project_id', Type.String({ description: 'the project the tenant events describe' })),
  },
  // A project's own tenant events set its ingest limit; the limiter caps it at the install's limit.
  async afterWrite(trx, events, ctx) {
    const latestLimit = new Map<string, { ts: number; limit: number }>()
    for (const event of events) {
      const limit = event.data.ingestLimitPerSecond
      if (limit === undefined || (event.data.projectId ?? event.projectId) !== event.projectId) continue
      const known = latestLimit.get(event.projectId)
      if (!known || event.ts >= known.ts) latestLimit.set(event.projectId, { ts: event.ts, limit })
    }
    for (const [projectId, { limit }] of latestLimit) {
      await trx.updateTable('projects').set({ ingest_events_per_second: limit }).where('id', '=', projectId).execute()
    }
    // Every portal forgets the old limit when this transaction commits.
    if (latestLimit.size > 0) await ctx.apiKeyPrincipals.forget(trx)
  },
  summaries: {
    plans: { table: 'tenant_plan_summary', columns: ['tenant_project_id'] },
  },
  signals: tenantSignals,
  routes: tenantReads,
})
