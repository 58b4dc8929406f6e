import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'
import { addFieldColumnV1 } from '../field-column-v1.ts'

export const tenantMigrations: Migration[] = [
  {
    name: 'tenants/001_tenant_events',
    up: (db, t) => createEventTableV1(db, t, 'tenant_events', [['tenant_project_id', 'text'], ['plan', 'text']], [['tenant_project_id']]),
  },
  {
    // Reads group by the tenant described; an event without `projectId` describes the sending project.
    name: 'tenants/002_tenant_defaults_to_sender',
    up: async (db) => {
      await db.updateTable('tenant_events').set((eb) => ({ tenant_project_id: eb.ref('project_id') })).where('tenant_project_id', 'is', null).execute()
    },
  },
  {
    name: 'tenants/003_plan_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'tenant_plan_summary', 'tenant_events', ['tenant_project_id']),
  },
  {
    // The plans list shows the latest limit any event gave: an index probe per tenant.
    name: 'tenants/004_limit_column',
    up: (db, t) => addFieldColumnV1(db, t, 'tenant_events', 'ingest_limit_per_second', 'bigint', 'ingestLimitPerSecond', 'tenant_project_id'),
  },
]
