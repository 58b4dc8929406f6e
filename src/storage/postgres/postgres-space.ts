import { sql, type Kysely } from 'kysely'
import type { SpaceManagement } from '../storage.ts'
import type { Connection, Database } from '../tables.ts'

const DAY_MS = 86_400_000

/**
 * How long dropping or attaching a partition waits for its table's lock before giving up until the next
 * pass. Dropping a partition takes the parent's exclusive lock, and inserts queue behind a waiting drop:
 * this bounds how long ingest can wait for one.
 */
const LOCK_TIMEOUT = '100ms'

function partitionName(table: string, day: number): string {
  return `${table}_p${new Date(day).toISOString().slice(0, 10).replace(/-/g, '')}`
}

interface Partition {
  name: string
  /** null for the default partition */
  from: number | null
  to: number | null
}

async function isPartitioned(db: Connection, table: string): Promise<boolean> {
  const kind = await sql<{ relkind: string }>`select relkind from pg_class where oid = to_regclass(${table})`.execute(db)
  return kind.rows[0]?.relkind === 'p'
}

async function partitionsOf(db: Connection, table: string): Promise<Partition[]> {
  const rows = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass(${table})`.execute(db)
  return rows.rows.map(({ name, bound }) => {
    const range = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(bound)
    return { name, from: range ? Number(range[1]) : null, to: range ? Number(range[2]) : null }
  })
}

/**
 * PostgreSQL: event tables are partitioned by day on `ts` (migration postgres/001), so retention drops
 * whole days, which gives their files back at once; rows deleted elsewhere are left to autovacuum, whose
 * freed space new rows reuse.
 */
export function postgresSpace(db: Kysely<Database>): SpaceManagement {
  return {
    async createPartitions(table, until) {
      if (!(await isPartitioned(db, table))) return []
      const existing = await partitionsOf(db, table)
      const covered = new Set(existing.map((partition) => partition.from))
      const newest = Math.max(...existing.map((partition) => partition.to ?? -Infinity), Math.floor(Date.now() / DAY_MS) * DAY_MS)
      const created: string[] = []
      for (let day = newest; day < until; day += DAY_MS) {
        if (covered.has(day)) continue
        const name = partitionName(table, day)
        await db.transaction().execute(async (trx) => {
          await sql`set local lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx)
          // Rows already in the default partition for that day move into the new one; attaching it fails otherwise.
          await sql`create table ${sql.table(name)} (like ${sql.table(table)} including defaults)`.execute(trx)
          await sql`
            with moved as (delete from ${sql.table(`${table}_default`)} where ts >= ${day} and ts < ${day + DAY_MS} returning *)
            insert into ${sql.table(name)} select * from moved`.execute(trx)
          await sql`alter table ${sql.table(table)} attach partition ${sql.table(name)} for values from (${sql.lit(day)}) to (${sql.lit(day + DAY_MS)})`.execute(trx)
        })
        created.push(name)
      }
      return created
    },
    async dropPartitionsBefore(table, cutoff) {
      if (!(await isPartitioned(db, table))) return []
      const expired = (await partitionsOf(db, table)).filter((partition) => partition.to !== null && partition.to <= cutoff)
      const dropped: string[] = []
      for (const partition of expired) {
        await db.transaction().execute(async (trx) => {
          await sql`set local lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx)
          await sql`drop table if exists ${sql.table(partition.name)}`.execute(trx)
        })
        dropped.push(partition.name)
      }
      return dropped
    },
    returnFreeSpace: async () => 0,
    async tableSizes(tables) {
      const rows = await sql<{ table_name: string; bytes: string | number | null }>`
        select t.name as table_name,
          coalesce((select sum(pg_total_relation_size(p.relid)) from pg_partition_tree(to_regclass(t.name)) p), pg_total_relation_size(to_regclass(t.name))) as bytes
        from unnest(${tables}::text[]) as t(name)`.execute(db)
      return Object.fromEntries(rows.rows.map((row) => [row.table_name, Number(row.bytes ?? 0)]))
    },
    close: async () => {},
  }
}
