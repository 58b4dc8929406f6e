import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import { createProject, createTestDatabase, DIALECTS, event, ingest, readAll, startTestPortalOn, type TestPortal } from '../support/portal.ts'

// With EVENT_STORE unset, each columnar module's table decides where its events live (docs/event-store.md): in
// DuckDB (events.duckdb), unless SQLite holds its rows from before, which stay there. PostgreSQL has one store. '' unsets the EVENT_STORE a test run may pass to its portals (test/row-store.test.ts).
const DEFAULT = { EVENT_STORE: '' }

const messages = async (t: TestPortal, projectId: string) => (await readAll(t, `/api/modules/logs/events?project_id=${projectId}`)).map((e) => e.data.message).sort()
const rowsInDatabase = async (t: TestPortal) => Number((await sql<{ n: number }>`select count(*) as n from log_events`.execute(t.portal.ctx.storage.db)).rows[0].n)

for (const dialect of DIALECTS) {
  describe(`the default event store on ${dialect}`, () => {
    test('a new data folder stores and reads its logs where the default puts them', async () => {
      const database = await createTestDatabase(dialect)
      try {
        const t = await startTestPortalOn(dialect, database, DEFAULT)
        try {
          const project = await createProject(t)
          assert.equal((await ingest(t, project, [event('log', { level: 'info', message: 'one' }), event('log', { level: 'error', message: 'two' })])).status, 200)
          assert.deepEqual(await messages(t, project.id), ['one', 'two'])
          const inDuckdb = dialect === 'sqlite'
          assert.equal(fs.existsSync(path.join(database.dataDir, 'events.duckdb')), inDuckdb)
          assert.equal(await rowsInDatabase(t), inDuckdb ? 0 : 2)
          if (inDuckdb) {
            // One file holds every columnar module's events; each module's size is its share, by rows.
            const logs = Array.from({ length: 200 }, (_, i) => event('log', { level: 'info', message: `log ${i}` }))
            assert.equal((await ingest(t, project, [...logs, event('cost', { amount: 1, currency: 'USD' })])).status, 200)
            const sizeOf = async (module: string) => (await t.request('GET', `/api/modules/${module}/status`, { token: t.viewerToken })).body.sizeBytes as number
            const [logBytes, costBytes] = [await sizeOf('logs'), await sizeOf('costs')]
            assert.ok(logBytes > 50 * costBytes && costBytes > 0, `logs ${logBytes} B, costs ${costBytes} B`)
          }
        } finally {
          await t.close()
        }
      } finally {
        await database.drop()
      }
    })
  })
}

if (DIALECTS.includes('sqlite')) {
  test('with EVENT_STORE unset, a table whose events are SQLite rows keeps them there, read and written, until they are gone', async () => {
    const database = await createTestDatabase('sqlite')
    const duckdbFile = path.join(database.dataDir, 'events.duckdb')
    const rows = async (t: TestPortal, table: string) => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(t.portal.ctx.storage.db)).rows[0].n)
    const costs = async (t: TestPortal, projectId: string) => (await readAll(t, `/api/modules/costs/events?project_id=${projectId}`)).map((e) => e.data.service).sort()
    try {
      const before = await startTestPortalOn('sqlite', database, { EVENT_STORE: 'sqlite' })
      const project = await createProject(before)
      assert.equal((await ingest(before, project, [event('log', { level: 'info', message: 'stored as a row' })])).status, 200)
      await before.close()
      assert.ok(!fs.existsSync(duckdbFile))

      // Logs have rows: they stay. Costs have none: they go to DuckDB, which the folder now gets.
      const after = await startTestPortalOn('sqlite', database, DEFAULT)
      try {
        assert.equal((await ingest(after, project, [event('log', { level: 'info', message: 'after the upgrade' }), event('cost', { amount: 2, currency: 'USD', service: 'db' })])).status, 200)
        assert.deepEqual(await messages(after, project.id), ['after the upgrade', 'stored as a row'])
        assert.equal(await rows(after, 'log_events'), 2)
        assert.deepEqual(await costs(after, project.id), ['db'])
        assert.equal(await rows(after, 'cost_events'), 0, 'the cost is in DuckDB')
        assert.ok(fs.existsSync(duckdbFile))
      } finally {
        await after.close()
      }

      // The next start keeps the same split: DuckDB holds the costs, the logs are still rows.
      const again = await startTestPortalOn('sqlite', database, DEFAULT)
      try {
        assert.deepEqual(await messages(again, project.id), ['after the upgrade', 'stored as a row'])
        assert.deepEqual(await costs(again, project.id), ['db'])
        // What retention does in its time: the rows are gone.
        await sql`delete from log_events`.execute(again.portal.ctx.storage.db)
      } finally {
        await again.close()
      }

      // With no rows left, the logs move to DuckDB too.
      const moved = await startTestPortalOn('sqlite', database, DEFAULT)
      try {
        assert.equal((await ingest(moved, project, [event('log', { level: 'info', message: 'in DuckDB' })])).status, 200)
        assert.deepEqual(await messages(moved, project.id), ['in DuckDB'])
        assert.equal(await rows(moved, 'log_events'), 0)
        assert.deepEqual(await costs(moved, project.id), ['db'])
      } finally {
        await moved.close()
      }
    } finally {
      await database.drop()
    }
  })
}

if (DIALECTS.includes('sqlite')) {
  test('a column SQLite has and DuckDB lacks (a start during migrations, an upgrade) is added before rows that carry it', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const first = await startTestPortalOn('sqlite', database, DEFAULT)
      const project = await createProject(first)
      assert.equal((await ingest(first, project, [event('video', { jobId: 'job-1', status: 'queued' })])).status, 200)
      assert.equal((await first.request('GET', `/api/video/jobs/job-1?project_id=${project.id}`, { token: first.viewerToken })).status, 200)
      await first.close()
      // As a start that made the DuckDB table before a migration added the column would have left it.
      const { DuckDBInstance } = await import('@duckdb/node-api')
      const duckdb = await DuckDBInstance.create(path.join(database.dataDir, 'events.duckdb'))
      const connection = await duckdb.connect()
      await connection.run('alter table video_events drop column artifact_url')
      connection.closeSync()
      duckdb.closeSync()

      const again = await startTestPortalOn('sqlite', database, DEFAULT)
      try {
        const artifactUrl = 'https://cdn.example.com/job-1.mp4'
        assert.equal((await ingest(again, project, [event('video', { jobId: 'job-1', status: 'done', artifactUrl })])).status, 200)
        const job = await again.request('GET', `/api/video/jobs/job-1?project_id=${project.id}`, { token: again.viewerToken })
        assert.equal(job.status, 200, job.text)
        assert.equal(job.body.artifactUrl, artifactUrl)
      } finally {
        await again.close()
      }
    } finally {
      await database.drop()
    }
  })
}

if (DIALECTS.includes('sqlite')) {
  test('an outbox row an earlier version left deflated (acknowledged, not yet applied at its stop) is applied after the upgrade', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const first = await startTestPortalOn('sqlite', database, DEFAULT)
      const project = await createProject(first)
      assert.equal((await ingest(first, project, [event('log', { level: 'info', message: 'current' })])).status, 200)
      await first.close()
      // As a portal that stored blocks deflated left its outbox when it was killed before applying them.
      const columns = ['id', 'project_id', 'ts', 'received_at', 'data', 'level', 'module', 'message']
      const ts = Date.now()
      const values = [['evt_left_deflated'], [project.id], [ts], [ts], ['{"level":"warn","message":"left deflated"}'], ['warn'], [null], ['left deflated']]
      const { default: SQLite } = await import('../../src/storage/sqlite/better-sqlite3.ts')
      const { deflateRawSync } = await import('node:zlib')
      const state = new SQLite(path.join(database.dataDir, 'portal.db'))
      state.prepare('insert into event_outbox (event_table, events, first_ts, last_ts, block) values (?, 1, ?, ?, ?)').run('log_events', ts, ts, deflateRawSync(JSON.stringify({ columns, values }), { level: 1 }))
      state.close()

      const again = await startTestPortalOn('sqlite', database, DEFAULT)
      try {
        assert.deepEqual(await messages(again, project.id), ['current', 'left deflated'])
      } finally {
        await again.close()
      }
    } finally {
      await database.drop()
    }
  })
}

if (DIALECTS.includes('sqlite')) {
  test('an outbox backlog larger than one pass (by events and by rows) is applied whole at the next start, each event once', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const first = await startTestPortalOn('sqlite', database, DEFAULT)
      const project = await createProject(first)
      await first.close()
      // As a portal killed under full ingest leaves its outbox: a few commits of many events, and many of one.
      const columns = ['id', 'project_id', 'ts', 'received_at', 'data', 'level', 'module', 'message']
      const ts = Date.now()
      const block = (prefix: string, count: number) => {
        const ids = Array.from({ length: count }, (_, i) => `evt_${prefix}_${i}`)
        return JSON.stringify({ columns, values: [ids, ids.map(() => project.id), ids.map(() => ts), ids.map(() => ts), ids.map(() => '{"level":"info"}'), ids.map(() => 'info'), ids.map(() => null), ids] })
      }
      const { default: SQLite } = await import('../../src/storage/sqlite/better-sqlite3.ts')
      const state = new SQLite(path.join(database.dataDir, 'portal.db'))
      const insert = state.prepare('insert into event_outbox (event_table, events, first_ts, last_ts, block) values (?, ?, ?, ?, ?)')
      for (let commit = 0; commit < 4; commit++) insert.run('log_events', 12_000, ts, ts, block(`big${commit}`, 12_000))
      for (let commit = 0; commit < 300; commit++) insert.run('log_events', 1, ts, ts, block(`small${commit}`, 1))
      state.close()

      const again = await startTestPortalOn('sqlite', database, DEFAULT)
      try {
        // The start applied it all before the portal listened, not a read's barrier after.
        const left = await sql<{ n: number }>`select count(*) as n from event_outbox`.execute(again.portal.ctx.storage.db)
        assert.equal(Number(left.rows[0].n), 0)
        const events = again.portal.ctx.storage.eventsOf('log_events').db
        const counted = await sql<{ n: number; ids: number }>`select count(*) as n, count(distinct id) as ids from log_events where project_id = ${project.id}`.execute(events)
        assert.deepEqual({ n: Number(counted.rows[0].n), ids: Number(counted.rows[0].ids) }, { n: 48_300, ids: 48_300 })
      } finally {
        await again.close()
      }
    } finally {
      await database.drop()
    }
  })
}

if (DIALECTS.includes('sqlite')) {
  test('a second portal of this process on the same data folder is refused, naming events.duckdb', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const first = await startTestPortalOn('sqlite', database, DEFAULT)
      try {
        await assert.rejects(startTestPortalOn('sqlite', database, DEFAULT), /events\.duckdb is open by another portal in this process/)
        const project = await createProject(first)
        assert.equal((await ingest(first, project, [event('log', { level: 'info', message: 'still served' })])).status, 200)
        assert.deepEqual(await messages(first, project.id), ['still served'])
      } finally {
        await first.close()
      }
    } finally {
      await database.drop()
    }
  })
}
