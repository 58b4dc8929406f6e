import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DuckDBInstance } from '@duckdb/node-api'
import { sql } from 'kysely'
import { describeDuckdbFailure, duckdbFailure, isOutOfMemory } from '../../src/storage/duckdb/duckdb-failures.ts'
import { createProject, DIALECTS, event, ingest, startTestPortal } from '../support/portal.ts'

// A query DuckDB refuses memory (past its `memory_limit`) is that query's 503 `overloaded`: never an outage,
// which would send ingest into the outbox and reads to 503s until a reopen, nor a 500.
test('a query DuckDB refuses memory is told apart from an outage', async () => {
  const instance = await DuckDBInstance.create(':memory:', { memory_limit: '2MiB', threads: '1' })
  try {
    const connection = await instance.connect()
    const refused = await connection.run('select count(distinct x::varchar) from range(3000000) t(x)').then(
      () => assert.fail('the query fitted in 2 MiB'),
      (error: unknown) => error,
    )
    connection.closeSync()
    assert.equal(isOutOfMemory(refused), true, String(refused))
    assert.equal(duckdbFailure(refused), undefined)
    assert.match(describeDuckdbFailure(refused), /^Out of Memory Error/)
    assert.equal(isOutOfMemory(new Error('IO Error: Could not write file "x": No space left on device')), false)
  } finally {
    instance.closeSync()
  }
})

if (DIALECTS.includes('sqlite')) {
  test('a read DuckDB cannot give the memory it needs is answered 503 overloaded, and the next one after is served', async () => {
    const t = await startTestPortal('sqlite', { EVENT_STORE: 'duckdb' })
    try {
      const project = await createProject(t)
      const sent = await ingest(t, project, JSON.stringify({ events: Array.from({ length: 200 }, (_, i) => event('log', { level: 'info', message: `order ${i} paid`, module: 'billing' })) }))
      assert.equal(sent.status, 200, sent.text)
      const read = () => t.request('GET', `/api/modules/logs/events?project_id=${project.id}&q=paid`, { token: t.viewerToken })
      assert.equal((await read()).status, 200)
      // DuckDB's limit is the instance's: lowered under the running portal to what it holds already, as a host short
      // of memory would leave it.
      const duckdb = t.portal.ctx.storage.eventsOf('log_events').db
      const { rows } = await sql<{ bytes: number }>`select sum(memory_usage_bytes) as bytes from duckdb_memory()`.execute(duckdb)
      await sql.raw(`set memory_limit = '${Number(rows[0].bytes) + 4096}B'`).execute(duckdb)
      const refused = await read()
      assert.equal(refused.status, 503, refused.text)
      assert.equal(refused.body.code, 'overloaded')
      assert.match(refused.body.detail, /memory/)
      assert.equal(refused.headers.get('retry-after'), '1')
      await sql`set memory_limit = '1GiB'`.execute(duckdb)
      const served = await read()
      assert.equal(served.status, 200, served.text)
      assert.equal(served.body.data.length, 50)
    } finally {
      await t.close()
    }
  })
}
