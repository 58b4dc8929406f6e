import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { Kysely } from 'kysely'
import { createProject, createTestDatabase, DIALECTS, event, type TestDatabase, type TestPortal, type TestProject, startTestPortalOn } from '../support/portal.ts'
import { at, ingestAll, read } from '../support/module-reads.ts'

// The DuckDB event store (EVENT_STORE=duckdb, SQLite only) keeps a log's level, module and message in
// their columns and not again inside `data`, which every read gets back whole (docs/event-store.md).
const OLD_LOGS = [
  { level: 'error', message: 'payment failed', module: 'billing', fields: { requestId: 'r-1' } },
  { message: 'no level or module', extra: { level: 'nested' } },
  { zeta: 1, module: 'orders', message: 'order created', level: 'info' },
]
const NEW_LOGS = [{ level: 'error', message: 'refund failed', module: 'billing' }]

/** Runs `work` on events.duckdb of a stopped portal. */
async function withEventsFile<T>(database: TestDatabase, work: (run: (sql: string, values?: string[]) => Promise<Record<string, unknown>[]>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(path.join(database.dataDir, 'events.duckdb'))
  const connection = await instance.connect()
  try {
    return await work(async (sql, values) => (await connection.runAndReadAll(sql, values)).getRowObjectsJS())
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

if (DIALECTS.includes('sqlite')) {
  describe('DuckDB event store: level, module and message kept once', () => {
    let database: TestDatabase
    let t: TestPortal
    let running = false
    let project: TestProject
    let answer: string
    const start = async () => {
      t = await startTestPortalOn('sqlite', database, { EVENT_STORE: 'duckdb' })
      running = true
    }
    const stop = async () => {
      running = false
      await t.close()
    }
    const eventsPage = async () => (await t.request('GET', `/api/modules/logs/events?project_id=${project.id}`, { token: t.viewerToken })).text
    before(async () => {
      database = await createTestDatabase('sqlite', { migrated: true })
      await start()
      project = await createProject(t, 'promoted')
      await ingestAll(t, project, OLD_LOGS.map((data, i) => event('log', data, at(i))))
      answer = await eventsPage() // the read applies the outbox to DuckDB
      await stop()
    })
    after(async () => {
      if (running) await stop()
      await database.drop()
    })

    test('the stored data holds the other fields only; the read gives it back whole', async () => {
      const stored = await withEventsFile(database, (run) => run('select data from log_events order by ts'))
      assert.deepEqual(stored.map((row) => JSON.parse(row.data as string)), [{ fields: { requestId: 'r-1' } }, { extra: { level: 'nested' } }, { zeta: 1 }])
      assert.deepEqual(JSON.parse(answer).data.map((e: any) => e.data), [...OLD_LOGS].reverse())
    })

    test('rows stored with the whole data, as before, read and filter the same', async () => {
      await withEventsFile(database, async (run) => {
        for (const data of OLD_LOGS) await run('update log_events set data = $1 where message = $2', [JSON.stringify(data), data.message])
      })
      await start()
      assert.equal(await eventsPage(), answer)
      const messages = async (filter: string) => (await read(t, `/api/modules/logs/events?project_id=${project.id}&${filter}`)).data.map((e: any) => e.data.message)
      assert.deepEqual(await messages('level=error'), ['payment failed'])
      assert.deepEqual(await messages('module=orders'), ['order created'])
      assert.deepEqual(await messages('q=order'), ['order created'])
    })

    test('a filter on a promoted field inside data finds it in rows stored before and after', async () => {
      await ingestAll(t, project, NEW_LOGS.map((data) => event('log', data, at(10))))
      const events = t.portal.ctx.storage.eventsOf('log_events')
      const db = events.db as unknown as Kysely<any>
      const rows = await db.selectFrom('log_events').select('message').where('project_id', '=', project.id).where(events.jsonText('data', 'level'), '=', 'error').orderBy('ts').execute()
      assert.deepEqual(rows.map((row) => row.message), ['payment failed', 'refund failed'])
      const billing = await db.selectFrom('log_events').select('message').where('project_id', '=', project.id).where(events.jsonPathText('data', ['module']), '=', 'billing').orderBy('ts').execute()
      assert.deepEqual(billing.map((row) => row.message), ['payment failed', 'refund failed'])
    })
  })
}
