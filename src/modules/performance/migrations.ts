import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const performanceMigrations: Migration[] = [
  {
    name: 'performance/001_performance_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'performance_events', [['service', 'text'], ['metric', 'text'], ['value', 'double'], ['unit', 'text']], [['service', 'metric'], ['metric']]),
  },
]
