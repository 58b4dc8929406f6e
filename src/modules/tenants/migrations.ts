import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const tenantMigrations: Migration[] = [
  {
    name: 'tenants/001_tenant_events',
    up: (db, t) => createEventTableV1(db, t, 'tenant_events', [['tenant_project_id', 'text'], ['plan', 'text']], [['tenant_project_id']]),
  },
]
