import { sql } from 'kysely'
import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'

export const logMigrations: Migration[] = [
  {
    name: 'logs/001_log_events',
    up: (db, t) => createEventTableV1(db, t, 'log_events', [['level', 'text'], ['module', 'text'], ['message', 'text']], [['level'], ['module']]),
  },
  {
    // Counts per project, hour and level, kept at ingest, so a count per level over weeks reads hours, not logs.
    name: 'logs/002_level_hours',
    async up(db, t) {
      await db.schema
        .createTable('log_level_hours')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('hour', t.bigint, (c) => c.notNull())
        .addColumn('level_key', 'text', (c) => c.notNull())
        .addColumn('level', 'text')
        .addColumn('events', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('log_level_hours_pk', ['project_id', 'hour', 'level_key'])
        .execute()
      const counts = await db
        .selectFrom('log_events')
        .select((eb) => ['project_id', sql<number>`(ts / 3600000) * 3600000`.as('hour'), 'level', eb.fn.countAll().as('events')])
        .groupBy(['project_id', sql`(ts / 3600000) * 3600000`, 'level'])
        .execute()
      const rows = counts.map((row) => ({ ...row, hour: Number(row.hour), events: Number(row.events), level_key: JSON.stringify(row.level ?? null) }))
      for (let start = 0; start < rows.length; start += 1000) await db.insertInto('log_level_hours').values(rows.slice(start, start + 1000)).execute()
    },
  },
  {
    // A shard in the key: every ingest transaction of a busy project added to one row per hour and level,
    // so PostgreSQL queued the portals' commits on that row's lock. Counts are summed across shards on read.
    name: 'logs/003_level_hour_shards',
    async up(db, t) {
      const tables = await db.introspection.getTables()
      const current = tables.find((table) => table.name === 'log_level_hours')
      if (current?.columns.some((column) => column.name === 'shard')) return
      await db.schema.dropTable('log_level_hours_sharded').ifExists().execute()
      await db.schema
        .createTable('log_level_hours_sharded')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('hour', t.bigint, (c) => c.notNull())
        .addColumn('level_key', 'text', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('level', 'text')
        .addColumn('events', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('log_level_hour_shards_pk', ['project_id', 'hour', 'level_key', 'shard'])
        .execute()
      await db
        .insertInto('log_level_hours_sharded')
        .columns(['project_id', 'hour', 'level_key', 'level', 'events'])
        .expression(db.selectFrom('log_level_hours').select(['project_id', 'hour', 'level_key', 'level', 'events']))
        .execute()
      await db.schema.dropTable('log_level_hours').execute()
      await db.schema.alterTable('log_level_hours_sharded').renameTo('log_level_hours').execute()
    },
  },
  {
    // Counts per project, minute and level, kept at ingest, so that an alert rule counting logs by level (and its
    // backtest over days) reads minutes, not logs. Not filled from the stored logs, which the event store may hold
    // in another database (DuckDB): a project that existed already reads the minutes before `since` from its logs.
    name: 'logs/004_level_minutes',
    async up(db, t) {
      await db.schema
        .createTable('log_level_minutes')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('ts', t.bigint, (c) => c.notNull())
        .addColumn('level_key', 'text', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('level', 'text')
        .addColumn('events', t.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('log_level_minutes_pk', ['project_id', 'ts', 'level_key', 'shard'])
        .execute()
      await db.schema
        .createTable('log_level_minutes_since')
        .ifNotExists()
        .addColumn('project_id', 'text', (c) => c.primaryKey())
        .addColumn('since', t.bigint, (c) => c.notNull())
        .execute()
      // the next whole minute: logs of this one may have been written before the counts began
      const since = Math.ceil((Date.now() + 1) / 60_000) * 60_000
      await db.deleteFrom('log_level_minutes_since').execute()
      await db
        .insertInto('log_level_minutes_since')
        .columns(['project_id', 'since'])
        .expression(db.selectFrom('projects').select((eb) => ['id', eb.val(since).as('since')]))
        .execute()
    },
  },
]
