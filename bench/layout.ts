// Bytes per log event of the table and each index, with the first release's newest-first indexes and with
// the layout migrations (ascending indexes; on PostgreSQL, day partitions), each over the same events
// written in time order as ingest writes them. BENCH_LAYOUT_EVENTS (default 1,000,000) sets the count;
// TEST_DATABASES=sqlite (or postgres) narrows the databases.
import { sql, type Kysely } from 'kysely'
import { newId } from '../src/ids.ts'
import { allMigrations } from '../src/portal.ts'
import { migrate } from '../src/storage/migrations.ts'
import { openStorage } from '../src/storage/open-storage.ts'
import type { Storage } from '../src/storage/storage.ts'
import { createTestDatabase, DIALECTS, type Dialect } from '../test/support/portal.ts'

const EVENTS = Number(process.env.BENCH_LAYOUT_EVENTS ?? 1_000_000)
const ROWS_PER_TRANSACTION = 100
const LEVELS = ['info', 'info', 'info', 'debug', 'warn', 'error']

async function measure(dialect: Dialect, withLayout: boolean): Promise<void> {
  const database = await createTestDatabase(dialect)
  const storage: Storage = await openStorage(database.url, { poolSize: 2, queryTimeoutMs: 600_000, sqliteSynchronous: 'normal' })
  try {
    await migrate(storage, withLayout ? [...allMigrations, ...storage.layoutMigrations] : allMigrations)
    const db = storage.db as unknown as Kysely<any>
    const start = Date.now() - 2 * 86_400_000
    for (let first = 0; first < EVENTS; first += ROWS_PER_TRANSACTION) {
      const rows: Record<string, unknown>[] = []
      for (let i = first; i < Math.min(EVENTS, first + ROWS_PER_TRANSACTION); i++) {
        const ts = start + i
        const data = { level: LEVELS[i % LEVELS.length], module: `module-${i % 20}`, message: `order ${i % 9973} created`, fields: { requestId: `req-${i % 50_000}` } }
        rows.push({ id: newId('evt', ts), project_id: 'prj_bench', ts, received_at: ts, data: JSON.stringify(data), level: data.level, module: data.module, message: data.message })
      }
      await db.transaction().execute((trx) => trx.insertInto('log_events').values(rows).execute())
    }
    const tables = await storage.space.tableSizes(['log_events'])
    console.log(`  ${dialect.padEnd(8)} ${withLayout ? 'layout migrations' : 'first release    '}  log_events with indexes: ${(tables.log_events / EVENTS).toFixed(1)} B/event`)
    if (dialect === 'sqlite') {
      // dbstat's aggregate rows: every B-tree's bytes and the bytes its pages leave unused
      const trees = await sql<{ name: string; bytes: number; unused: number }>`select name, pgsize as bytes, unused from dbstat('main', 1) where name in (select name from sqlite_schema where tbl_name = 'log_events') order by name`.execute(db)
      for (const tree of trees.rows) console.log(`             ${tree.name.padEnd(34)} ${(tree.bytes / EVENTS).toFixed(1).padStart(6)} B/event, ${((100 * tree.unused) / tree.bytes).toFixed(0).padStart(3)} % unused`)
    }
  } finally {
    await storage.close()
    await database.drop()
  }
}

export async function run() {
  console.log(`${EVENTS} log events in time order, ${ROWS_PER_TRANSACTION} a transaction`)
  for (const dialect of DIALECTS) {
    await measure(dialect, false)
    await measure(dialect, true)
  }
}
