import { sql, type Kysely } from 'kysely'
import type { Migration } from '../migrations.ts'
import { EVENT_TABLES_V1 } from '../frozen/event-tables-v1.ts'

const DAY_MS = 86_400_000
/** days before today that get a partition of their own when a table with events is converted; older rows go to the default partition */
const DAYS_BACK = 32
/** days after today created ahead at conversion; the retention job keeps creating them */
const DAYS_AHEAD = 7

function dayName(table: string, day: number): string {
  return `${table}_p${new Date(day).toISOString().slice(0, 10).replace(/-/g, '')}`
}

/**
 * Turns one event table into a table partitioned by day on `ts`, with its rows and indexes, the indexes
 * ascending. Frozen: it repeats the partition statement rather than importing the retention job's.
 */
async function partitionByDay(db: Kysely<any>, table: string): Promise<void> {
  const kind = await sql<{ relkind: string }>`select relkind from pg_class where oid = to_regclass(${table})`.execute(db)
  if (kind.rows.length === 0 || kind.rows[0].relkind === 'p') return
  const indexes = await sql<{ indexname: string; indexdef: string }>`
    select i.indexname, i.indexdef from pg_indexes i
    where i.schemaname = current_schema() and i.tablename = ${table}
      and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.contype = 'p')`.execute(db)
  const unpartitioned = `${table}_unpartitioned`
  await sql`alter table ${sql.table(table)} rename to ${sql.table(unpartitioned)}`.execute(db)
  await sql`create table ${sql.table(table)} (like ${sql.table(unpartitioned)} including defaults) partition by range (ts)`.execute(db)
  const oldest = await sql<{ ts: string | number | null }>`select min(ts) as ts from ${sql.table(unpartitioned)}`.execute(db)
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS
  const first = oldest.rows[0]?.ts === null || oldest.rows[0]?.ts === undefined ? today : Math.floor(Number(oldest.rows[0].ts) / DAY_MS) * DAY_MS
  for (let day = Math.max(first, today - DAYS_BACK * DAY_MS); day <= today + DAYS_AHEAD * DAY_MS; day += DAY_MS) {
    await sql`create table ${sql.table(dayName(table, day))} partition of ${sql.table(table)} for values from (${sql.lit(day)}) to (${sql.lit(day + DAY_MS)})`.execute(db)
  }
  await sql`create table ${sql.table(`${table}_default`)} partition of ${sql.table(table)} default`.execute(db)
  await sql`insert into ${sql.table(table)} select * from ${sql.table(unpartitioned)}`.execute(db)
  await sql`drop table ${sql.table(unpartitioned)}`.execute(db)
  // A partitioned table's unique keys must hold its partition key; ids stay unique by how they are made.
  await sql`alter table ${sql.table(table)} add primary key (id, ts)`.execute(db)
  for (const index of indexes.rows) await sql.raw(index.indexdef.replace(/ DESC\b/g, '')).execute(db)
}

export const postgresLayoutMigrations: Migration[] = [
  {
    // Retention drops a day's partition instead of deleting its rows one by one (docs/retention.md), and
    // ascending indexes fill their pages where newest-first ones left half of each empty.
    name: 'postgres/001_event_tables_by_day',
    async up(db) {
      for (const table of EVENT_TABLES_V1) await partitionByDay(db, table)
    },
  },
]
