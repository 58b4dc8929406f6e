import { sql } from 'kysely'
import type { Migration, MigrationDb } from '../migrations.ts'
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
async function partitionByDay(db: MigrationDb, table: string): Promise<void> {
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

/** `(…, ts, id)` of an index definition, with its columns before `ts` and any `WHERE`. */
const TS_ID_INDEX = /^CREATE INDEX (\S+) ON ONLY \S+ USING btree \((.*), ts, id\)( WHERE .*)?$/

/**
 * Makes one partitioned event table lean on disk and cheap to insert into: a hash index on `id` in place of
 * the `(id, ts)` primary key, the `(…, ts, id)` indexes without their trailing `id` and packed full, the
 * data as `json` (the text as sent) instead of `jsonb`. Frozen, and safe to re-run.
 */
async function leanEventTable(db: MigrationDb, table: string): Promise<void> {
  const kind = await sql<{ relkind: string }>`select relkind from pg_class where oid = to_regclass(${table})`.execute(db)
  if (kind.rows.length === 0 || kind.rows[0].relkind !== 'p') return
  // A B-tree entry of (id, ts) costs ~68 B an event, a hash entry ~37 B. The key held no promise anyway:
  // a partitioned table's key must include `ts`, so it never made `id` unique; ids are unique by construction.
  const key = await sql<{ conname: string }>`select conname from pg_constraint where conrelid = to_regclass(${table}) and contype = 'p'`.execute(db)
  for (const { conname } of key.rows) await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(conname)}`.execute(db)
  const indexes = await sql<{ indexdef: string }>`select indexdef from pg_indexes where schemaname = current_schema() and tablename = ${table}`.execute(db)
  const rebuilt: { name: string; columns: string; where: string }[] = []
  for (const { indexdef } of indexes.rows) {
    const match = TS_ID_INDEX.exec(indexdef)
    if (!match) continue
    rebuilt.push({ name: match[1], columns: match[2], where: match[3] ?? '' })
    await sql`drop index ${sql.ref(match[1])}`.execute(db)
  }
  // Stored as sent, `json` is what SQLite keeps too; `jsonb` parses every document at insert and its per-key
  // headers make a small document larger. The reads only extract fields (`->>`, `#>>`), which both types do.
  const type = await sql<{ data_type: string }>`select data_type from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = 'data'`.execute(db)
  if (type.rows[0]?.data_type === 'jsonb') await sql`alter table ${sql.table(table)} alter column data type json using data::json`.execute(db)
  await sql`create index if not exists ${sql.ref(`${table}_id_idx`)} on ${sql.table(table)} using hash (id)`.execute(db)
  // Without `id` the key is what the reads filter and order on; ties in `ts` are put in `id` order by an
  // incremental sort of the few rows sharing a millisecond. Events arrive in time order, so inserts land on
  // the rightmost leaf and a full page is never split again: fillfactor 100 leaves no room unused.
  for (const index of rebuilt) {
    await sql.raw(`create index ${index.name} on ${table} (${index.columns}, ts) with (fillfactor = 100)${index.where}`).execute(db)
  }
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
  {
    // The log workload took ~710 B an event in PostgreSQL (docs/event-store.md, PostgreSQL): four B-trees
    // each carrying the 33-byte id, and jsonb. This one takes the id out of the indexes and keeps the JSON as text.
    name: 'postgres/002_lean_event_tables',
    async up(db) {
      for (const table of EVENT_TABLES_V1) await leanEventTable(db, table)
    },
  },
]
