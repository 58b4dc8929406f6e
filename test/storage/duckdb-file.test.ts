import { test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { createProject, createTestDatabase, DIALECTS, event, ingest, startTestPortalOn, type TestDatabase } from '../support/portal.ts'
import { realisticLogs } from '../../bench/workload/realistic-logs.ts'

// How events.duckdb is laid out on disk. DuckDB-only: PostgreSQL holds events as rows.
//
// DuckDB rewrites partial row groups that follow one another when it merges them at a checkpoint, and leaves the
// blocks they held free in the file. Checkpointing every 16 MB of WAL (its default) left a quarter of events.duckdb
// free after steady ingest; the materialiser checkpoints once a table has taken a whole row group (122,880 rows).
const ROW_GROUP_ROWS = 122_880

/** Runs `read` on the data folder's events.duckdb, opened read-only once the portal has stopped. */
async function inEventsFile<T>(database: TestDatabase, read: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(path.join(database.dataDir, 'events.duckdb'), { access_mode: 'READ_ONLY' })
  try {
    const connection = await instance.connect()
    try {
      return await read(connection)
    } finally {
      connection.closeSync()
    }
  } finally {
    instance.closeSync()
  }
}

const compressionOf = (connection: DuckDBConnection, table: string, column: string) =>
  connection.runAndReadAll(`select distinct compression from pragma_storage_info('${table}') where column_name = '${column}' and segment_type = 'VARCHAR'`).then((reader) => reader.getRows().map(([name]) => String(name)))

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
      await inEventsFile(database, async (connection) => {
        const [size] = (await connection.runAndReadAll('pragma database_size')).getRowObjects()
        const [{ rows }] = (await connection.runAndReadAll('select count(*)::integer as rows from log_events')).getRowObjects()
        assert.equal(rows, Math.round(ROW_GROUP_ROWS * 2.5))
        // The stop's checkpoint may still merge the last two partial row groups: a few blocks (43 % of them before).
        assert.ok(Number(size.free_blocks) * 10 <= Number(size.total_blocks), `${size.free_blocks} of ${size.total_blocks} blocks free`)
      })
    } finally {
      await database.drop()
    }
  })

  test('a new file compresses ids and messages with ZSTD; a file of the older format keeps its text compressed as before', async () => {
    // Messages that share most of their text: DuckDB chose to store 3,000 short ones uncompressed in one run of four.
    const logs = Array.from({ length: 3_000 }, (_, i) => event('log', { level: 'info', module: 'http', message: `GET /api/orders/${i * 7919} answered 200 after a lookup in the primary database of the orders service in ${i % 900} ms` }))
    const ingestLogs = async (database: TestDatabase) => {
      const t = await startTestPortalOn('sqlite', database, { EVENT_STORE: 'duckdb' })
      try {
        assert.equal((await ingest(t, await createProject(t), logs)).status, 200)
      } finally {
        await t.close()
      }
    }
    const fresh = await createTestDatabase('sqlite')
    const older = await createTestDatabase('sqlite')
    try {
      await ingestLogs(fresh)
      await inEventsFile(fresh, async (connection) => {
        for (const column of ['id', 'message']) assert.ok((await compressionOf(connection, 'log_events', column)).includes('ZSTD'), column)
        for (const column of ['data', 'level']) assert.ok(!(await compressionOf(connection, 'log_events', column)).includes('ZSTD'), column)
      })
      // A file DuckDB made in its default format (1.0), as portals before this one did, holding none of the tables yet.
      const instance = await DuckDBInstance.create(path.join(older.dataDir, 'events.duckdb'))
      instance.closeSync()
      await ingestLogs(older)
      await inEventsFile(older, async (connection) => {
        // There ZSTD would be taken, and every segment stored uncompressed; without it the text is compressed (FSST).
        for (const column of ['id', 'message']) assert.ok((await compressionOf(connection, 'log_events', column)).includes('FSST'), column)
      })
    } finally {
      await fresh.drop()
      await older.drop()
    }
  })
}
