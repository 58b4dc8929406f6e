import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { openStorage } from '../../src/storage/open-storage.ts'
import { SqliteReader } from '../../src/storage/sqlite/sqlite-reader.ts'
import { watchEventLoop } from '../support/event-loop.ts'

// SQLite only: PostgreSQL's statements run in its own server processes anyway.
test('SQLite reads run off the event loop and beside an open write transaction; their rows and errors come back', { timeout: 60_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-sqlite-reader-'))
  const storage = await openStorage(`sqlite:${path.join(dir, 'portal.db')}`, { poolSize: 1, queryTimeoutMs: 0, sqliteSynchronous: 'full' })
  try {
    const eventLoop = watchEventLoop(5)
    const started = performance.now()
    const { rows } = await sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000000) select count(*) as n from c`.execute(storage.db)
    const took = performance.now() - started
    const longestGap = eventLoop.stop()
    assert.deepEqual(rows, [{ n: 3_000_000 }])
    assert.ok(took > 100, `the query is long enough to tell (${took.toFixed(0)} ms)`)
    assert.ok(longestGap < took / 2, `the event loop went on during the ${took.toFixed(0)} ms query (longest pause ${longestGap.toFixed(0)} ms)`)

    // Blobs come back as Buffers, and SQLite's error codes reach the caller.
    await sql`create table blobs (id integer primary key, body blob not null)`.execute(storage.db)
    await sql`insert into blobs (id, body) values (1, ${Buffer.from('zipped')})`.execute(storage.db)
    const [blob] = (await sql<{ body: Buffer }>`select body from blobs`.execute(storage.db)).rows
    assert.ok(Buffer.isBuffer(blob.body) && blob.body.toString() === 'zipped')
    await assert.rejects(sql`insert into blobs (id, body) values (1, x'00')`.execute(storage.db), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })
    await assert.rejects(sql`select * from no_such_table`.execute(storage.db), { code: 'SQLITE_ERROR', message: /no such table/ })

    // A read does not wait for a write transaction to end, and sees what was committed before it.
    let finish!: () => void
    const open = storage.db.transaction().execute(async (trx) => {
      await sql`insert into blobs (id, body) values (2, x'00')`.execute(trx)
      await new Promise<void>((resolve) => (finish = resolve))
    })
    while (!finish) await new Promise((resolve) => setImmediate(resolve))
    const during = (await sql<{ id: number }>`select id from blobs order by id`.execute(storage.db)).rows
    assert.deepEqual(during, [{ id: 1 }])
    finish()
    await open
    assert.deepEqual((await sql<{ id: number }>`select id from blobs order by id`.execute(storage.db)).rows, [{ id: 1 }, { id: 2 }])
  } finally {
    await storage.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a reader that cannot open its file fails every read with the reason, and does not leave them waiting', { timeout: 30_000 }, async () => {
  const reader = new SqliteReader(path.join(os.tmpdir(), `portal-missing-${process.pid}.db`), [], 10)
  await assert.rejects(reader.query('select 1', []), { code: 'SQLITE_CANTOPEN' })
  await assert.rejects(reader.query('select 1', []), { code: 'SQLITE_CANTOPEN' })
  await reader.close()
})
