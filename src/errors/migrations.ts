import type { Migration } from '../storage/migrations.ts'
import { createEventTableV1 } from '../storage/frozen/event-table-v1.ts'

export const errorMigrations: Migration[] = [
  {
    name: 'errors/001_error_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'error_events', [['name', 'text'], ['environment', 'text'], ['release', 'text']], [['name'], ['environment']]),
  },
]
