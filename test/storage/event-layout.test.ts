import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sql, type Kysely } from 'kysely'
import { allMigrations } from '../../src/portal.ts'
import { migrate } from '../../src/storage/migrations.ts'
import { openStorage } from '../../src/storage/open-storage.ts'
import type { Storage } from '../../src/storage/storage.ts'
import { createTestDatabase, DIALECTS } from '../support/portal.ts'

const DAY = 86_400_000
const today = Math.floor(Date.now() / DAY) * DAY
const AGES = [400, 40, 10, 3, 0]

for (const dialect of DIALECTS) {
  describe(`event table layout over existing events on ${dialect}`, () => {
    let storage: Storage
    let drop: () => Promise<void>
    let db: Kysely<any>
    before(async () => {
      const database = await createTestDatabase(dialect)
      drop = database.drop
      storage = await openStorage(database.url, { poolSize: 2, queryTimeoutMs: 15_000, sqliteSynchronous: 'full' })
      db = storage.db as unknown as Kysely<any>
      await migrate(storage, allMigrations)
      for (const age of AGES) {
        const ts = today - age * DAY + 3_600_000
        await db.insertInto('log_events').values({ id: `evt_${age}`, project_id: 'prj_a', ts, received_at: ts, data: '{}', level: 'info', module: null, message: `${age}d` }).execute()
      }
      await migrate(storage, [...allMigrations, ...storage.layoutMigrations])
    })
    after(async () => {
      await storage.close()
      await drop()
    })

    test('every event is still there after the layout migrations, and running them again changes nothing', async () => {
      for (const migration of storage.layoutMigrations) await db.transaction().execute((trx) => migration.up(trx, storage.types))
      const rows = await db.selectFrom('log_events').select('message').orderBy('ts', 'desc').orderBy('id', 'desc').execute()
      assert.deepEqual(rows.map((row) => row.message), AGES.map((age) => `${age}d`).reverse())
    })

    test('no event index is declared newest-first any more', async () => {
      const definitions =
        dialect === 'sqlite'
          ? (await sql<{ definition: string }>`select sql as definition from sqlite_schema where type = 'index' and tbl_name = 'log_events' and sql is not null`.execute(db)).rows
          : (await sql<{ definition: string }>`select indexdef as definition from pg_indexes where tablename = 'log_events'`.execute(db)).rows
      assert.ok(definitions.length >= 3, JSON.stringify(definitions))
      for (const { definition } of definitions) assert.doesNotMatch(definition, /\sdesc\b/i)
    })

    test('the newest-first page of a project walks the (project, time) index backwards, sorting at most the ties in time', async () => {
      const page = db.selectFrom('log_events').select(['id', 'ts']).where('project_id', '=', 'prj_a').where('level', '=', 'info').orderBy('ts', 'desc').orderBy('id', 'desc').limit(50)
      if (dialect === 'sqlite') {
        const compiled = page.compile()
        const plan = (await db.executeQuery<{ detail: string }>({ ...compiled, sql: `explain query plan ${compiled.sql}` })).rows.map((row) => row.detail).join('\n')
        assert.match(plan, /USING (COVERING )?INDEX log_events_level_idx/)
        assert.doesNotMatch(plan, /TEMP B-TREE/)
      } else {
        await sql`set enable_seqscan = off`.execute(db)
        const compiled = page.compile()
        const plan = (await db.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `explain ${compiled.sql}` })).rows.map((row) => row['QUERY PLAN']).join('\n')
        assert.match(plan, /Index (Only )?Scan Backward using/)
        // The indexes end in `ts` (postgres/002): the rows sharing a millisecond are put in `id` order, nothing more.
        assert.match(plan, /Presorted Key: (log_events\.)?ts\n/)
        assert.doesNotMatch(plan.replace(/Incremental Sort/g, ''), /Sort\s+\(cost/)
      }
    })

    test('sizes count partitioned and plain tables, with their indexes', async () => {
      const sizes = await storage.space.tableSizes(['log_events', 'idempotency_keys', 'no_such_table'])
      assert.ok(sizes.log_events > 0 && sizes.idempotency_keys > 0, JSON.stringify(sizes))
      assert.equal(sizes.no_such_table, 0)
    })

    test('dropping expired partitions removes whole days on PostgreSQL and nothing on SQLite, where the job deletes rows', async () => {
      const dropped = await storage.space.dropPartitionsBefore('log_events', today - 7 * DAY)
      const left = (await db.selectFrom('log_events').select('message').orderBy('ts').execute()).map((row) => row.message)
      if (dialect === 'sqlite') {
        assert.deepEqual(dropped, [])
        assert.equal(left.length, AGES.length)
        return
      }
      // Rows older than the partitions made at conversion (32 days back) live in the default partition, where the job deletes them.
      assert.ok(dropped.includes(`log_events_p${new Date(today - 10 * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`), dropped.join())
      assert.deepEqual(left, ['400d', '40d', '3d', '0d'])
      const created = await storage.space.createPartitions('log_events', today + 10 * DAY)
      assert.equal(created.length, 2, created.join())
      const far = today + 9 * DAY + 1
      await db.insertInto('log_events').values({ id: 'evt_far', project_id: 'prj_a', ts: far, received_at: far, data: '{}', level: null, module: null, message: 'far' }).execute()
      const where = await sql<{ partition: string }>`select tableoid::regclass::text as partition from log_events where id = 'evt_far'`.execute(db)
      assert.equal(where.rows[0].partition, created[1])
    })

    test('a day that was in the default partition moves into its own when that partition is made', async () => {
      if (dialect === 'sqlite') return
      const later = today + 30 * DAY + 5
      await db.insertInto('log_events').values({ id: 'evt_later', project_id: 'prj_a', ts: later, received_at: later, data: '{}', level: null, module: null, message: 'later' }).execute()
      const created = await storage.space.createPartitions('log_events', today + 31 * DAY)
      assert.ok(created.length > 0)
      const where = await sql<{ partition: string }>`select tableoid::regclass::text as partition from log_events where id = 'evt_later'`.execute(db)
      assert.equal(where.rows[0].partition, created.at(-1))
    })
  })
}
