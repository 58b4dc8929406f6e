import { test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { createProject, createTestDatabase, DIALECTS, ingest, startTestPortalOn } from '../support/portal.ts'
import { realisticLogs } from '../../bench/workload/realistic-logs.ts'

// DuckDB rewrites partial row groups that follow one another when it merges them at a checkpoint, and leaves the
// blocks they held free in the file. Checkpointing every 16 MB of WAL (its default) left a quarter of events.duckdb
// free after steady ingest; the materialiser checkpoints once a table has taken a whole row group (122,880 rows).
// DuckDB-only: PostgreSQL holds events as rows.
const ROW_GROUP_ROWS = 122_880

if (DIALECTS.includes('sqlite')) {
  test('steady ingest into the DuckDB event store leaves few free blocks in its file', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const t = await startTestPortalOn('sqlite', database, { EVENT_STORE: 'duckdb', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '10000000', LOG_LEVEL: 'warn' })
      try {
        const project = await createProject(t)
        const endMs = Date.now()
        // 2.5 row groups of realistic logs, in 100-event batches on four connections, as services send them
        const total = Math.round(ROW_GROUP_ROWS * 2.5)
        let next = 0
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            for (let first = next; first < total; first = next) {
              next += 100
              const response = await ingest(t, project, JSON.stringify({ events: realisticLogs(Math.min(100, total - first), { first, total, endMs }) }))
              assert.equal(response.status, 200, response.text)
            }
          }),
        )
      } finally {
        await t.close()
      }
      const instance = await DuckDBInstance.create(path.join(database.dataDir, 'events.duckdb'), { access_mode: 'READ_ONLY' })
      try {
        const connection = await instance.connect()
        const [size] = (await connection.runAndReadAll('pragma database_size')).getRowObjects()
        const [{ rows }] = (await connection.runAndReadAll('select count(*)::integer as rows from log_events')).getRowObjects()
        assert.equal(rows, Math.round(ROW_GROUP_ROWS * 2.5))
        // The stop's checkpoint may still merge the last two partial row groups: a few blocks (43 % of them before).
        assert.ok(Number(size.free_blocks) * 10 <= Number(size.total_blocks), `${size.free_blocks} of ${size.total_blocks} blocks free`)
        connection.closeSync()
      } finally {
        instance.closeSync()
      }
    } finally {
      await database.drop()
    }
  })
}
