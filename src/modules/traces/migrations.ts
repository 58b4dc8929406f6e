import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const traceMigrations: Migration[] = [
  {
    name: 'traces/001_trace_events',
    up: (db, t) =>
      createEventTableV1(
        db,
        t,
        'trace_events',
        [['trace_id', 'text'], ['span_id', 'text'], ['parent_span_id', 'text'], ['service_name', 'text'], ['name', 'text'], ['duration_ms', 'double']],
        [['trace_id'], ['service_name']],
      ),
  },
]
