import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Kysely } from 'kysely'
import { createProject, DIALECTS, event, startTestPortal, type Dialect, type TestPortal, type TestProject } from '../support/portal.ts'
import { at, ingestAll, read } from '../support/module-reads.ts'

// Every event store keeps a log's level, module and message in their columns and not again inside
// `data`, which every read gets back whole (src/storage/promoted-fields.ts, docs/event-store.md).
const OLD_LOGS = [
  { level: 'error', message: 'payment failed', module: 'billing', fields: { requestId: 'r-1' } },
  { message: 'no level or module', extra: { level: 'nested' } },
  { zeta: 1, module: 'orders', message: 'order created', level: 'info' },
]
const NEW_LOGS = [{ level: 'error', message: 'refund failed', module: 'billing' }]

const STORES: { name: string; dialect: Dialect; env: Record<string, string> }[] = [
  ...DIALECTS.map((dialect) => ({ name: dialect, dialect, env: { EVENT_STORE: 'sqlite' } })),
  // DuckDB holds events beside SQLite only.
  ...(DIALECTS.includes('sqlite') ? [{ name: 'duckdb', dialect: 'sqlite' as const, env: { EVENT_STORE: 'duckdb' } }] : []),
]

for (const store of STORES) {
  describe(`level, module and message kept once, in their columns, on the ${store.name} event store`, () => {
    let t: TestPortal
    let project: TestProject
    let answer: string
    // The log table as the event store holds it, read and written past the module's reads.
    const logEvents = () => t.portal.ctx.storage.eventsOf('log_events').db as unknown as Kysely<any>
    const eventsPage = async () => (await t.request('GET', `/api/modules/logs/events?project_id=${project.id}`, { token: t.viewerToken })).text
    before(async () => {
      t = await startTestPortal(store.dialect, store.env)
      project = await createProject(t, 'promoted')
      await ingestAll(t, project, OLD_LOGS.map((data, i) => event('log', data, at(i))))
      answer = await eventsPage()
    })
    after(() => t.close())

    test('the stored data holds the other fields only; the read gives it back whole', async () => {
      const stored = await logEvents().selectFrom('log_events').select('data').where('project_id', '=', project.id).orderBy('ts').execute()
      assert.deepEqual(stored.map((row) => t.portal.ctx.storage.parseJson(row.data)), [{ fields: { requestId: 'r-1' } }, { extra: { level: 'nested' } }, { zeta: 1 }])
      assert.deepEqual(JSON.parse(answer).data.map((e: any) => e.data), [...OLD_LOGS].reverse())
    })

    test('rows stored with the whole data, as before, read and filter the same', async () => {
      for (const data of OLD_LOGS) {
        await logEvents().updateTable('log_events').set({ data: JSON.stringify(data) }).where('project_id', '=', project.id).where('message', '=', data.message).execute()
      }
      const stored = await logEvents().selectFrom('log_events').select('data').where('project_id', '=', project.id).orderBy('ts').execute()
      assert.deepEqual(stored.map((row) => t.portal.ctx.storage.parseJson(row.data)), OLD_LOGS)
      assert.equal(await eventsPage(), answer)
      const messages = async (filter: string) => (await read(t, `/api/modules/logs/events?project_id=${project.id}&${filter}`)).data.map((e: any) => e.data.message)
      assert.deepEqual(await messages('level=error'), ['payment failed'])
      assert.deepEqual(await messages('module=orders'), ['order created'])
      assert.deepEqual(await messages('q=order'), ['order created'])
    })

    test('a filter on a promoted field inside data finds it in rows stored before and after', async () => {
      await ingestAll(t, project, NEW_LOGS.map((data) => event('log', data, at(10))))
      const events = t.portal.ctx.storage.eventsOf('log_events')
      const errors = await logEvents().selectFrom('log_events').select('message').where('project_id', '=', project.id).where(events.jsonText('data', 'level'), '=', 'error').orderBy('ts').execute()
      assert.deepEqual(errors.map((row) => row.message), ['payment failed', 'refund failed'])
      const billing = await logEvents().selectFrom('log_events').select('message').where('project_id', '=', project.id).where(events.jsonPathText('data', ['module']), '=', 'billing').orderBy('ts').execute()
      assert.deepEqual(billing.map((row) => row.message), ['payment failed', 'refund failed'])
    })
  })
}
