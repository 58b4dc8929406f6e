import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'

export const featureFlagMigrations: Migration[] = [
  {
    name: 'flags/001_feature_flag_events',
    up: (db, t) => createEventTableV1(db, t, 'feature_flag_events', [['flag_key', 'text'], ['actor', 'text']], [['flag_key']]),
  },
  {
    name: 'flags/002_flag_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'feature_flag_summary', 'feature_flag_events', ['flag_key']),
  },
]
