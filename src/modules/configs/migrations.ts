import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'

export const configMigrations: Migration[] = [
  {
    name: 'configs/001_config_events',
    up: (db, t) => createEventTableV1(db, t, 'config_events', [['path', 'text'], ['actor', 'text']], [['path'], ['actor']]),
  },
  {
    name: 'configs/002_path_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'config_path_summary', 'config_events', ['path']),
  },
]
