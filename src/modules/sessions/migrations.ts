import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const sessionMigrations: Migration[] = [
  {
    name: 'sessions/001_session_events',
    up: (db, t) => createEventTableV1(db, t, 'session_events', [['release', 'text'], ['environment', 'text']], [['release', 'environment']]),
  },
  {
    // Release health reads these two summaries, kept in the ingest transaction: a session's updates fold
    // into its one row (its worst state), aggregates add up per bucket. Window reads then count rows.
    name: 'sessions/002_release_health',
    async up(db, t) {
      await db.schema
        .createTable('session_states')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('release', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('distinct_id', 'text', (c) => c.notNull())
        .addColumn('started', t.bigint, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('status_rank', 'integer', (c) => c.notNull())
        .addColumn('errors', 'integer', (c) => c.notNull())
        .addColumn('updated_at', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('session_states_pk', ['project_id', 'session_id'])
        .execute()
      await db.schema.createIndex('session_states_window_idx').ifNotExists().on('session_states').columns(['project_id', 'started']).execute()
      await db.schema
        .createTable('session_aggregates')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('release', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('started', t.bigint, (c) => c.notNull())
        .addColumn('distinct_id', 'text', (c) => c.notNull())
        .addColumn('exited', t.bigint, (c) => c.notNull())
        .addColumn('errored', t.bigint, (c) => c.notNull())
        .addColumn('abnormal', t.bigint, (c) => c.notNull())
        .addColumn('crashed', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('session_aggregates_pk', ['project_id', 'started', 'release', 'environment', 'distinct_id'])
        .execute()
    },
  },
]
