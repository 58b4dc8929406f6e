import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Kysely } from 'kysely'
import { loadConfig } from '../../src/config.ts'
import { modules } from '../../src/modules/registry.ts'
import { openMigratedStorage } from '../../src/portal.ts'
import { createTestDatabase, DIALECTS } from '../support/portal.ts'

// Storage.insertRows writes each database its own way (PostgreSQL as COPY text, where backslashes, line
// breaks, tabs and `\N` mean something): what comes back must be what went in, whatever the text holds.
const ROWS: Record<string, unknown>[] = [
  { id: 'evt_1', project_id: 'prj_x', ts: 1_790_000_000_123, received_at: 1_790_000_000_124, data: '{"fields":{"quote":"\\"","path":"C:\\\\dir","unicode":"\\u00e9 ✓"}}', level: 'error', module: 'billing', message: 'line one\nline "two" \\ \t ünïcödé 🚀' },
  { id: 'evt_2', project_id: 'prj_x', ts: 1_790_000_000_125, received_at: 1_790_000_000_126, data: '{}', level: null, message: '' },
  { id: 'evt_3', project_id: 'prj_x', ts: 0, received_at: 1, data: '[1,2.5,null,true]', level: 'info', module: "o'brien", message: '{"not":"json in a text column"}' },
  { id: 'evt_4', project_id: 'prj_x', ts: 2, received_at: 3, data: '{\r\n\t"a": "b\\\\N"\n}', level: '\\N', module: 'tab\there', message: 'crlf\r\nend\\' },
]

for (const dialect of DIALECTS) {
  describe(`insertRows on ${dialect}`, () => {
    test('stores strings, numbers, JSON, nulls and missing columns exactly as given', async () => {
      const database = await createTestDatabase(dialect, { migrated: true })
      const storage = await openMigratedStorage(loadConfig(modules, { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, EVENT_STORE: 'sqlite' }))
      try {
        await storage.db.transaction().execute((trx) => storage.insertRows(trx, 'log_events', ROWS))
        const stored = await (storage.db as unknown as Kysely<any>).selectFrom('log_events').selectAll().orderBy('id').execute()
        assert.deepEqual(
          stored.map((row) => ({ ...row, data: storage.parseJson(row.data) })),
          ROWS.map((row) => ({ module: null, ...row, data: JSON.parse(row.data as string) })),
        )
        // stored as JSON, not as a JSON string holding it: the database reads inside it
        const quote = await (storage.db as unknown as Kysely<any>).selectFrom('log_events').select(storage.jsonPathText('data', ['fields', 'quote']).as('quote')).where('id', '=', 'evt_1').executeTakeFirstOrThrow()
        assert.equal(quote.quote, '"')
      } finally {
        await storage.close()
        await database.drop()
      }
    })
  })
}
