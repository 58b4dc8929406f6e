import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const configMigrations: Migration[] = [
  {
    name: 'configs/001_config_events',
    up: (db, t) => createEventTableV1(db, t, 'config_events', [['path', 'text'], ['actor', 'text']], [['path'], ['actor']]),
  },
]
