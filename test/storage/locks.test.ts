import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config.ts'
import { modules } from '../../src/modules/registry.ts'
import { openMigratedStorage } from '../../src/portal.ts'
import type { Storage } from '../../src/storage/storage.ts'
import { createTestDatabase, DIALECTS } from '../support/portal.ts'

async function withStorage(dialect: (typeof DIALECTS)[number], run: (storage: Storage) => Promise<void>) {
  const database = await createTestDatabase(dialect, { migrated: true })
  const storage = await openMigratedStorage(loadConfig(modules, { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir }))
  try {
    await run(storage)
  } finally {
    await storage.close()
    await database.drop()
  }
}

/** Resolves once `promise` settles, or with 'waiting' when it has not within `ms`. */
const settledWithin = (promise: Promise<unknown>, ms: number) => Promise.race([promise.then(() => 'settled'), new Promise((resolve) => setTimeout(resolve, ms, 'waiting'))])

for (const dialect of DIALECTS) {
  describe(`Storage locks on ${dialect}`, () => {
    test('tryLockInTransaction takes a free lock, free again once its transaction ends', async () => {
      await withStorage(dialect, async (storage) => {
        assert.equal(await storage.db.transaction().execute((trx) => storage.tryLockInTransaction(trx, 'fold:a')), true)
        assert.equal(await storage.db.transaction().execute((trx) => storage.tryLockInTransaction(trx, 'fold:a')), true, 'free again after the commit')
      })
    })

    // SQLite runs one transaction at a time, so only a database with concurrent transactions can hold a lock another asks for.
    if (dialect === 'postgres') {
      test('while another transaction holds the lock, tryLockInTransaction answers false at once and lockInTransaction waits', async () => {
        await withStorage(dialect, async (storage) => {
          let release!: () => void
          const held = new Promise<void>((resolve) => (release = resolve))
          let taken!: () => void
          const isTaken = new Promise<void>((resolve) => (taken = resolve))
          await storage.db.transaction().execute((trx) => storage.lockInTransaction(trx, 'fold:a')) // its row exists, as after a first fold
          const holder = storage.db.transaction().execute(async (trx) => {
            await storage.lockInTransaction(trx, 'fold:a')
            taken()
            await held
          })
          await isTaken
          assert.equal(await storage.db.transaction().execute((trx) => storage.tryLockInTransaction(trx, 'fold:a')), false)
          assert.equal(await storage.db.transaction().execute((trx) => storage.tryLockInTransaction(trx, 'fold:b')), true, 'another name is free')
          const waiter = storage.db.transaction().execute((trx) => storage.lockInTransaction(trx, 'fold:a'))
          assert.equal(await settledWithin(waiter, 300), 'waiting')
          release()
          await holder
          await waiter
          assert.equal(await storage.db.transaction().execute((trx) => storage.tryLockInTransaction(trx, 'fold:a')), true)
        })
      })
    }
  })
}
