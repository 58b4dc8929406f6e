import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'

export const auditMigrations: Migration[] = [
  {
    name: 'audit/001_audit_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'audit_events', [['actor', 'text'], ['action', 'text'], ['resource', 'text'], ['status_code', 'integer']], [['actor'], ['action'], ['resource']]),
  },
  {
    name: 'audit/002_actor_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'audit_actor_summary', 'audit_events', ['actor']),
  },
]
