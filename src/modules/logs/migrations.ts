import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const logMigrations: Migration[] = [
  {
    name: 'logs/001_log_events',
    up: (db, t) => createEventTableV1(db, t, 'log_events', [['level', 'text'], ['module', 'text'], ['message', 'text']], [['level'], ['module']]),
  },
]
