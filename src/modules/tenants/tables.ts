import type { EventRow, GroupSummaryRow } from '../module.ts'

/** Row types of the tenants module's tables, as its migrations leave them. */
export interface TenantTables {
  tenant_events: EventRow & { tenant_project_id: string; plan: string; ingest_limit_per_second: number | null }
  tenant_plan_summary: GroupSummaryRow<'tenant_project_id'>
}
