import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'
import { createGroupHoursTableV1 } from '../group-hours-table-v1.ts'

export const configMigrations: Migration[] = [
  {
    name: 'configs/001_config_events',
    up: (db, t) => createEventTableV1(db, t, 'config_events', [['path', 'text'], ['actor', 'text']], [['path'], ['actor']]),
  },
  {
    name: 'configs/002_path_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'config_path_summary', 'config_events', ['path']),
  },
  {
    // Changes per path and hour: the paths list over weeks read every change in them.
    name: 'configs/003_path_hours',
    up: (db, t) => createGroupHoursTableV1(db, t, 'config_path_hours', 'config_events', ['path']),
  },
]
