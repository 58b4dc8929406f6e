import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const repositoryMigrations: Migration[] = [
  {
    name: 'repository/001_repository_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'repository_events', [['repo', 'text'], ['branch', 'text'], ['author', 'text']], [['repo', 'branch'], ['author']]),
  },
]
