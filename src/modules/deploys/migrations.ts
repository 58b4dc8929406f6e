import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'

export const deployMigrations: Migration[] = [
  {
    name: 'deploys/001_deploy_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'deploy_events', [['service', 'text'], ['environment', 'text'], ['status', 'text'], ['version', 'text']], [['service', 'environment'], ['status']]),
  },
  {
    name: 'deploys/002_target_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'deploy_target_summary', 'deploy_events', ['service', 'environment']),
  },
]
