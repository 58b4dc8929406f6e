import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql, type RawBuilder } from 'kysely'
import { walSync, type WalSync } from '../../src/storage/sqlite/wal-sync.ts'
import { openSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.ts'

/** Real fsyncs, each held until the test lets it finish, so that a test sees what waits for which. */
function heldSyncs() {
  const started: { release(error?: Error): void }[] = []
  const datasync = async (handle: fs.promises.FileHandle) => {
    const error = await new Promise<Error | undefined>((release) => started.push({ release }))
    if (error) throw error
    await handle.datasync()
  }
  return { started, datasync }
}

/** Waits (up to 5 s: a loaded machine's thread pool may be slow to open the file) until `count` fsyncs have begun. */
async function untilStarted(started: unknown[], count: number) {
  for (let waited = 0; started.length < count && waited < 5000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5))
}

/** Whether `promise` has settled, after letting every ready callback run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  await new Promise((resolve) => setTimeout(resolve, 20))
  return done
}

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'portal-wal-sync-'))
}

/** A WAL file, and a syncer of it whose fsyncs are held. */
async function withWal(run: (wal: { wal: WalSync; file: string } & ReturnType<typeof heldSyncs>) => Promise<void>) {
  const dir = tempDir()
  const file = path.join(dir, 'db-wal')
  fs.writeFileSync(file, 'frames')
  const held = heldSyncs()
  const wal = walSync(file, held.datasync)
  try {
    await run({ wal, file, ...held })
  } finally {
    await wal.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe('WAL sync', () => {
  test('a sync asked for while one runs waits for the next one, which callers share', () =>
    withWal(async ({ wal, started }) => {
      const first = wal.sync()
      await untilStarted(started, 1)
      assert.equal(started.length, 1)
      // Asked for after the first fsync began: it may not cover what was written since.
      const second = wal.sync()
      const third = wal.sync()
      assert.equal(await settled(second), false)
      assert.equal(started.length, 1, 'the next fsync starts only once the running one is done')
      started[0].release()
      await first
      assert.equal(await settled(second), false, 'the first fsync does not answer for later callers')
      await untilStarted(started, 2)
      assert.equal(started.length, 2, 'the two later callers share one fsync')
      started[1].release()
      await Promise.all([second, third])
      assert.equal(started.length, 2)
    }),
  )

  test('a failed fsync fails its callers, and the next one opens the file again', () =>
    withWal(async ({ wal, started, file }) => {
      const failing = wal.sync()
      await untilStarted(started, 1)
      started[0].release(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))
      await assert.rejects(failing, { code: 'EIO' })
      // A WAL that cannot be opened fails the sync rather than passing it.
      fs.renameSync(file, `${file}.moved`)
      await assert.rejects(wal.sync(), { code: 'ENOENT' })
      fs.renameSync(`${file}.moved`, file)
      const healed = wal.sync()
      await untilStarted(started, 2)
      started[1].release()
      await healed
    }),
  )
})

describe('SQLite with synchronous = full', () => {
  type Opened = { storage: ReturnType<typeof openSqliteStorage>; walFiles: string[] } & ReturnType<typeof heldSyncs>

  /** Runs `run` on a SQLite storage whose every WAL sync is held until released, then closes it. */
  async function withStorage(synchronous: 'full' | 'normal', run: (opened: Opened, db: any) => Promise<void>) {
    const dir = tempDir()
    const syncs = heldSyncs()
    const walFiles: string[] = []
    const storage = openSqliteStorage(path.join(dir, 'portal.db'), synchronous, (walFile): WalSync => {
      walFiles.push(walFile)
      return walSync(walFile, syncs.datasync)
    })
    try {
      await run({ storage, walFiles, ...syncs }, storage.db)
    } finally {
      for (const sync of syncs.started) sync.release()
      await storage.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }

  /** Runs the first statement, a CREATE TABLE, and lets the WAL sync that its commit asks for through. */
  async function createTable(opened: Opened, create: RawBuilder<unknown>) {
    const creating = create.execute(opened.storage.db)
    await untilStarted(opened.started, 1)
    assert.equal(opened.started.length, 1, 'the DDL commit is synced')
    opened.started[0].release()
    await creating
  }

  test('a write resolves once the WAL is synced after its commit; reads and other writes use the connection meanwhile', () =>
    withStorage('full', async (opened, db) => {
      assert.deepEqual(opened.walFiles.map((file) => path.basename(file)), ['portal.db-wal'])
      await createTable(opened, sql`create table t (id integer primary key, v text not null)`)

      const inserting = db.insertInto('t').values({ id: 1, v: 'one' }).execute()
      await untilStarted(opened.started, 2)
      assert.equal(await settled(inserting), false, 'not answered before its commit is on disk')
      assert.equal(opened.started.length, 2)
      // The connection is not held during the fsync: a read sees the committed row, and asks for no sync.
      assert.deepEqual(await db.selectFrom('t').select('v').execute(), [{ v: 'one' }])
      assert.equal(opened.started.length, 2, 'a read asks for no sync')
      const transaction = db.transaction().execute(async (trx: any) => {
        await trx.insertInto('t').values({ id: 2, v: 'two' }).execute()
        await trx.insertInto('t').values({ id: 3, v: 'three' }).execute()
      })
      await settled(transaction)
      assert.equal(opened.started.length, 2, 'the transaction committed while the first fsync runs, and waits for the next')
      opened.started[1].release()
      await inserting
      await untilStarted(opened.started, 3)
      assert.equal(opened.started.length, 3, 'one fsync for the whole transaction')
      assert.equal(await settled(transaction), false)
      opened.started[2].release()
      await transaction
      assert.equal((await db.selectFrom('t').select('id').execute()).length, 3)
      // A write that returns rows is a write all the same.
      const returning = db.insertInto('t').values({ id: 4, v: 'four' }).returning('id').execute()
      await untilStarted(opened.started, 4)
      assert.equal(opened.started.length, 4, 'an insert … returning is synced')
      assert.equal(await settled(returning), false)
      opened.started[3].release()
      assert.deepEqual(await returning, [{ id: 4 }])
    }),
  )

  test('a failed WAL sync fails the write with an error the portal reads as the database being unavailable', () =>
    withStorage('full', async (opened, db) => {
      await createTable(opened, sql`create table t (id integer primary key)`)
      const inserting = db.insertInto('t').values({ id: 1 }).execute()
      await untilStarted(opened.started, 2)
      opened.started[1].release(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))
      const error = await inserting.then(() => undefined, (caught: unknown) => caught)
      assert.equal((error as { code?: string })?.code, 'EIO')
      assert.equal(opened.storage.isUnavailable(error), true)
    }),
  )

  test('with synchronous = normal nothing waits for a sync', () =>
    withStorage('normal', async (opened, db) => {
      await sql`create table t (id integer primary key)`.execute(db)
      await db.insertInto('t').values({ id: 1 }).execute()
      assert.deepEqual(opened.walFiles, [])
      assert.equal(opened.started.length, 0)
    }),
  )
})
