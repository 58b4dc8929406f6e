import type { Migration, MigrationDb } from '../storage/migrations.ts'
import { createEventTableV1 } from '../storage/frozen/event-table-v1.ts'

export const errorMigrations: Migration[] = [
  {
    name: 'errors/001_error_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'error_events', [['name', 'text'], ['environment', 'text'], ['release', 'text']], [['name'], ['environment']]),
  },
  {
    // Statistics are kept per fingerprint (per day, and per environment, release and service) and carry
    // the group they belong to, so that a merge or an unmerge moves rows between groups and every count
    // stays exact. A fingerprint's own row never changes but for its group.
    name: 'errors/002_groups',
    async up(db, t) {
      await db.schema
        .createTable('error_groups')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('regressed', 'integer', (c) => c.notNull())
        .addColumn('count', t.bigint, (c) => c.notNull())
        .addColumn('first_seen', t.bigint, (c) => c.notNull())
        .addColumn('last_seen', t.bigint, (c) => c.notNull())
        .addColumn('status_changed_at', t.bigint)
        .addColumn('created_at', t.bigint, (c) => c.notNull())
        .execute()
      for (const column of ['last_seen', 'first_seen', 'count']) {
        await db.schema.createIndex(`error_groups_${column}_idx`).ifNotExists().on('error_groups').columns(['project_id', `${column} desc`, 'id desc']).execute()
      }
      await db.schema
        .createTable('error_fingerprints')
        .ifNotExists()
        .addColumn('fingerprint', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('group_id', 'text', (c) => c.notNull())
        .addColumn('algorithm', 'text', (c) => c.notNull())
        .addColumn('components', t.json, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('error_fingerprints_group_idx').ifNotExists().on('error_fingerprints').column('group_id').execute()
      await db.schema
        .createTable('error_fingerprint_days')
        .ifNotExists()
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('day', 'integer', (c) => c.notNull())
        .addColumn('group_id', 'text', (c) => c.notNull())
        .addColumn('count', t.bigint, (c) => c.notNull())
        .addColumn('first_seen', t.bigint, (c) => c.notNull())
        .addColumn('last_seen', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('error_fingerprint_days_pk', ['fingerprint', 'day'])
        .execute()
      await db.schema.createIndex('error_fingerprint_days_group_idx').ifNotExists().on('error_fingerprint_days').columns(['group_id', 'day']).execute()
      await db.schema
        .createTable('error_fingerprint_tags')
        .ifNotExists()
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('group_id', 'text', (c) => c.notNull())
        .addColumn('count', t.bigint, (c) => c.notNull())
        .addColumn('first_seen', t.bigint, (c) => c.notNull())
        .addColumn('last_seen', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('error_fingerprint_tags_pk', ['fingerprint', 'key', 'value'])
        .execute()
      await db.schema.createIndex('error_fingerprint_tags_group_idx').ifNotExists().on('error_fingerprint_tags').columns(['group_id', 'key', 'value']).execute()
      await db.schema
        .createTable('error_occurrences')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('group_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('ts', t.bigint, (c) => c.notNull())
        .addColumn('received_at', t.bigint, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('stack', 'text')
        .addColumn('frames', t.json)
        .addColumn('release', 'text')
        .addColumn('environment', 'text')
        .addColumn('service', 'text')
        .addColumn('request', t.json)
        .addColumn('metadata', t.json, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('error_occurrences_group_idx').ifNotExists().on('error_occurrences').columns(['group_id', 'ts desc', 'id desc']).execute()
    },
  },
  {
    // The retention job finds a project's expired occurrences by time.
    name: 'errors/003_occurrence_expiry_index',
    up: (db) => db.schema.createIndex('error_occurrences_project_ts_idx').ifNotExists().on('error_occurrences').columns(['project_id', 'ts']).execute(),
  },
  {
    // Links between signals: a trace's errors are found by trace id (from the occurrence's `traceId`).
    // Occurrences stored before this step keep a null trace_id; they still carry it in `metadata`.
    name: 'errors/004_occurrence_trace_id',
    async up(db) {
      await db.schema.alterTable('error_occurrences').addColumn('trace_id', 'text').execute()
      await db.schema.createIndex('error_occurrences_trace_idx').ifNotExists().on('error_occurrences').columns(['project_id', 'trace_id']).execute()
    },
  },
  {
    // Captures append their counts here instead of adding to a group's, day's or tag's row: an updated
    // row stays locked until its transaction commits, so portals capturing the same errors took turns.
    // Reads and a job every second fold them into those rows (group-store.ts, foldCounts).
    name: 'errors/005_count_deltas',
    async up(db, t) {
      await db.schema
        .createTable('error_count_deltas')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('group_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('day', 'integer', (c) => c.notNull())
        .addColumn('environment', 'text')
        .addColumn('release', 'text')
        .addColumn('service', 'text')
        .addColumn('count', t.bigint, (c) => c.notNull())
        .addColumn('first_seen', t.bigint, (c) => c.notNull())
        .addColumn('last_seen', t.bigint, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('error_count_deltas_group_idx').ifNotExists().on('error_count_deltas').column('group_id').execute()
      await db.schema.createIndex('error_count_deltas_project_idx').ifNotExists().on('error_count_deltas').column('project_id').execute()
    },
  },
  {
    // Context kept with each occurrence and counted per group: its breadcrumbs; its span and who reported
    // it (Sentry, OpenTelemetry), so that one exception reported by both is stored once; and each delta's
    // Sentry tags and user, folded into error_fingerprint_tags beside environment, release and service.
    // A delta that only `enriches` (the second report of a stored occurrence) adds tags, never counts.
    name: 'errors/006_occurrence_context',
    async up(db, t) {
      const occurrenceColumns = await columnsOf(db, 'error_occurrences')
      for (const [column, type] of [['breadcrumbs', t.json], ['span_id', 'text'], ['reported_by', 'text']] as const) {
        if (!occurrenceColumns.includes(column)) await db.schema.alterTable('error_occurrences').addColumn(column, type).execute()
      }
      const deltaColumns = await columnsOf(db, 'error_count_deltas')
      if (!deltaColumns.includes('tags')) await db.schema.alterTable('error_count_deltas').addColumn('tags', 'text').execute()
      if (!deltaColumns.includes('enriches')) await db.schema.alterTable('error_count_deltas').addColumn('enriches', 'integer', (c) => c.notNull().defaultTo(0)).execute()
    },
  },
  {
    // The grouping algorithm that opened each group: every group before this step was opened by v1.
    // A later version finds such a group through the fingerprint v1 gives an occurrence (group-store.ts).
    name: 'errors/007_group_algorithm',
    up: (db) => db.schema.alterTable('error_groups').addColumn('algorithm', 'text', (c) => c.notNull().defaultTo('v1')).execute(),
  },
  {
    // Conditions on a group's status, as Sentry's: resolved in the next release or in a named one (the
    // releases whose occurrences leave it resolved are listed), ignored until a time, a count or a number of users; and
    // `unignored`, set when a condition was reached. The (status, project) index lets every portal's
    // job find the ignored groups whose condition is reached without reading the others.
    name: 'errors/008_status_conditions',
    async up(db, t) {
      const columns = await columnsOf(db, 'error_groups')
      for (const [column, type] of [['resolved_in', 'text'], ['resolved_release', 'text'], ['ignored_until', t.bigint], ['ignored_until_count', t.bigint], ['ignored_until_users', t.bigint]] as const) {
        if (!columns.includes(column)) await db.schema.alterTable('error_groups').addColumn(column, type).execute()
      }
      if (!columns.includes('unignored')) await db.schema.alterTable('error_groups').addColumn('unignored', 'integer', (c) => c.notNull().defaultTo(0)).execute()
      await db.schema.createIndex('error_groups_status_idx').ifNotExists().on('error_groups').columns(['status', 'project_id']).execute()
      await db.schema
        .createTable('error_group_resolution_releases')
        .ifNotExists()
        .addColumn('group_id', 'text', (c) => c.notNull())
        .addColumn('release', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('error_group_resolution_releases_pk', ['group_id', 'release'])
        .execute()
    },
  },
  {
    // A group keeps its newest occurrences only; the ones it gives up are counted here first, per minute, user
    // and value of what error signals filter and split by, so that "seen more than N times in M" and "seen by
    // more than N users in M" stay exact for a group past them (src/errors/signals.ts). Expired by `ts` like
    // the occurrences.
    name: 'errors/009_trimmed_minutes',
    async up(db, t) {
      await db.schema
        .createTable('error_trimmed_minutes')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('group_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('ts', t.bigint, (c) => c.notNull())
        .addColumn('environment', 'text')
        .addColumn('release', 'text')
        .addColumn('service', 'text')
        .addColumn('level', 'text')
        .addColumn('user_key', 'text')
        .addColumn('events', t.bigint, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('error_trimmed_minutes_project_ts_idx').ifNotExists().on('error_trimmed_minutes').columns(['project_id', 'ts']).execute()
      await db.schema.createIndex('error_trimmed_minutes_group_idx').ifNotExists().on('error_trimmed_minutes').column('group_id').execute()
    },
  },
]

async function columnsOf(db: MigrationDb, table: string): Promise<string[]> {
  const tables = await db.introspection.getTables()
  return tables.find((found) => found.name === table)?.columns.map((column) => column.name) ?? []
}
