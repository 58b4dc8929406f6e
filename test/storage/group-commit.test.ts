import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { loadConfig } from '../../src/config.ts'
import { modules } from '../../src/modules/registry.ts'
import { openMigratedStorage } from '../../src/portal.ts'
import { createGroupCommitter } from '../../src/storage/group-commit.ts'
import { createTestDatabase, DIALECTS } from '../support/portal.ts'

/** Waits until `condition` holds, polling; fails naming `what` after `ms`. */
async function until(condition: () => boolean, what: string, ms = 5000) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`not reached within ${ms} ms: ${what}`)
    await sleep(5)
  }
}

for (const dialect of DIALECTS) {
  describe(`group commit on ${dialect}`, () => {
    test('writes up to writeTransactions transactions at once (SQLite one, PostgreSQL several) and answers each item with its own result', async () => {
      const database = await createTestDatabase(dialect, { migrated: true })
      const storage = await openMigratedStorage(loadConfig(modules, { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir }))
      let release!: () => void
      const gate = new Promise<void>((resolve) => (release = resolve))
      try {
        const limit = storage.writeTransactions
        assert.equal(limit, dialect === 'sqlite' ? 1 : 4)
        let open = 0
        let mostOpen = 0
        const groups: number[][] = []
        const committer = createGroupCommitter<number, number>(storage, async (trx, items) => {
          await sql`select 1`.execute(trx)
          open++
          mostOpen = Math.max(mostOpen, open)
          groups.push(items)
          await gate // every transaction stays open until the test has seen how many run at once
          open--
          return items.map((item) => item * 10)
        }, 100)

        // One item at a time, each once the previous one is in a transaction or waiting for a free one.
        const answers: Promise<number>[] = []
        for (let item = 0; item < limit + 2; item++) {
          answers.push(committer.write(item))
          await until(() => open === Math.min(item + 1, limit), `${Math.min(item + 1, limit)} open transactions`)
        }
        await sleep(100)
        assert.equal(open, limit, 'no transaction beyond the limit')
        release()
        assert.deepEqual(await Promise.all(answers), answers.map((_, item) => item * 10))
        assert.equal(mostOpen, limit)
        // the items that found every transaction taken waited, and shared the next one
        assert.deepEqual(groups.slice(0, limit).flat(), [...Array(limit).keys()])
        assert.deepEqual(groups.slice(limit).flat().sort(), [limit, limit + 1])
        await committer.close()
      } finally {
        release() // a failed assertion must not leave transactions open and the close waiting for them
        await storage.close()
        await database.drop()
      }
    })

    test('a transaction the database ends to break a deadlock runs again, and both items are answered', { skip: dialect === 'sqlite' && 'SQLite has one writer' }, async () => {
      const database = await createTestDatabase(dialect, { migrated: true })
      const storage = await openMigratedStorage(loadConfig(modules, { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir }))
      try {
        await sql`create table deadlock_rows (id integer primary key)`.execute(storage.db)
        await sql`insert into deadlock_rows values (1), (2)`.execute(storage.db)
        const locked = new Set<number>()
        let runs = 0
        // each run's item and how it ended, for the message of a failure
        const attempts: string[] = []
        // Item 1 locks row 1 then row 2, item 2 row 2 then row 1, each taking its second once the other
        // holds its first: a deadlock, the first time. Each item is alone in its transaction.
        const committer = createGroupCommitter<number, string>(storage, async (trx, [item]) => {
          const attempt = ++runs
          const [first, second] = item === 1 ? [1, 2] : [2, 1]
          try {
            await sql`select id from deadlock_rows where id = ${first} for update`.execute(trx)
            if (attempt <= 2) {
              locked.add(first)
              await until(() => locked.has(second), `row ${second} locked by the other item`)
            }
            await sql`select id from deadlock_rows where id = ${second} for update`.execute(trx)
          } catch (error) {
            attempts.push(`run ${attempt}: item ${item}, ${(error as { code?: string }).code ?? (error as Error).message}`)
            throw error
          }
          attempts.push(`run ${attempt}: item ${item}, selected both`)
          return [`item ${item} committed`]
        }, 1)
        const answers = Promise.allSettled([committer.write(1), committer.write(2)])
        assert.deepEqual(
          (await answers).map((answer) => (answer.status === 'fulfilled' ? answer.value : String(answer.reason))),
          ['item 1 committed', 'item 2 committed'],
        )
        // At least one run ended in a deadlock and ran again. The rerun can meet the other item's first
        // transaction still waiting for its second row and deadlock once more (ci4, a loaded machine: runs 2
        // and 3 both ended 40P01), so the count is not exact: every failed run was a deadlock, and each
        // item's last run selected both rows.
        const failed = attempts.filter((attempt) => !attempt.endsWith('selected both'))
        assert.ok(failed.length >= 1 && failed.every((attempt) => attempt.endsWith('40P01')), `runs that failed were deadlocks: ${attempts.join('; ')}`)
        assert.equal(runs, failed.length + 2, `one of the two ran again: ${attempts.join('; ')}`)
        await committer.close()
      } finally {
        await storage.close()
        await database.drop()
      }
    })
  })
}
