import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const costMigrations: Migration[] = [
  {
    name: 'costs/001_cost_events',
    up: (db, t) =>
      createEventTableV1(
        db,
        t,
        'cost_events',
        [['provider', 'text'], ['service', 'text'], ['region', 'text'], ['amount', 'double'], ['currency', 'text'], ['period', 'text']],
        [['period'], ['service']],
      ),
  },
]
