import { sql } from 'kysely'
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
  {
    // The trace list pages through root spans newest first, and its service filter looks inside each trace.
    name: 'traces/002_roots_and_trace_services',
    up: async (db) => {
      await db.schema
        .createIndex('trace_events_roots_idx')
        .ifNotExists()
        .on('trace_events')
        .columns(['project_id', 'ts desc', 'id desc'])
        .where(sql.ref('parent_span_id'), 'is', null)
        .execute()
      await db.schema.createIndex('trace_events_trace_service_idx').ifNotExists().on('trace_events').columns(['project_id', 'trace_id', 'service_name']).execute()
    },
  },
]
