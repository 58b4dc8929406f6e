import { sql } from 'kysely'
import type { Migration } from '../migrations.ts'
import { EVENT_TABLES_V1 } from '../frozen/event-tables-v1.ts'

export const sqliteLayoutMigrations: Migration[] = [
  {
    // Events arrive in time order, so a newest-first index takes every insert at its left edge, and SQLite
    // splits that page in half each time: about half its pages stood empty. Ascending, each insert lands at
    // the right edge, pages fill, and reads walk the same index backwards.
    name: 'sqlite/001_event_indexes_ascending',
    async up(db) {
      for (const table of EVENT_TABLES_V1) {
        const indexes = await sql<{ name: string; sql: string }>`select name, sql from sqlite_schema where type = 'index' and tbl_name = ${table} and sql is not null`.execute(db)
        for (const index of indexes.rows) {
          if (!/\sdesc\b/i.test(index.sql)) continue
          await sql`drop index if exists ${sql.id(index.name)}`.execute(db)
          await sql.raw(index.sql.replace(/\s+desc\b/gi, '').replace(/^create index (?!if not exists)/i, 'create index if not exists ')).execute(db)
        }
      }
    },
  },
]
