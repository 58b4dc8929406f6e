import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'
import { createGroupHoursTableV1 } from '../group-hours-table-v1.ts'

export const repositoryMigrations: Migration[] = [
  {
    name: 'repository/001_repository_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'repository_events', [['repo', 'text'], ['branch', 'text'], ['author', 'text']], [['repo', 'branch'], ['author']]),
  },
  {
    name: 'repository/002_branch_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'repository_branch_summary', 'repository_events', ['repo', 'branch']),
  },
  {
    name: 'repository/003_author_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'repository_author_summary', 'repository_events', ['author']),
  },
  {
    // Events per branch and hour: the branches list over weeks read every event in them.
    name: 'repository/004_branch_hours',
    up: (db, t) => createGroupHoursTableV1(db, t, 'repository_branch_hours', 'repository_events', ['repo', 'branch']),
  },
  {
    name: 'repository/005_author_hours',
    up: (db, t) => createGroupHoursTableV1(db, t, 'repository_author_hours', 'repository_events', ['author']),
  },
  {
    // Where the project's commits are browsed (links.ts): one row per project.
    name: 'repository/006_repository_links',
    up: (db, t) =>
      db.schema
        .createTable('repository_links')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id'))
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('base_url', 'text', (c) => c.notNull())
        .addColumn('repo', 'text')
        .addColumn('updated_at', t.bigint, (c) => c.notNull())
        .execute(),
  },
]
