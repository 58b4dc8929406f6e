import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sql, type Kysely } from 'kysely'
import { openStorage } from '../../src/storage/open-storage.ts'
import { rowWrite, type Storage } from '../../src/storage/storage.ts'
import { tablesOf } from '../../src/storage/tables.ts'
import { createTestDatabase, DIALECTS } from '../support/portal.ts'

interface Tally {
  id: string
  label: string
  total: number
}

// Adds to the stored total, as the errors module's counters do.
const TALLY_UPSERT = rowWrite<Tally>(['id', 'label', 'total'], (db, rows) =>
  tablesOf<{ tallies: Tally }>(db)
    .insertInto('tallies')
    .values(rows)
    .onConflict((conflict) => conflict.column('id').doUpdateSet({ label: sql.ref('excluded.label'), total: sql`tallies.total + excluded.total` })),
)

async function withTallies(dialect: (typeof DIALECTS)[number], run: (storage: Storage, db: Kysely<any>) => Promise<void>) {
  const database = await createTestDatabase(dialect)
  const storage = await openStorage(database.url, { poolSize: 4, queryTimeoutMs: 10_000, sqliteSynchronous: 'full' })
  const db = storage.db as unknown as Kysely<any>
  try {
    await db.schema.createTable('tallies').addColumn('id', 'text', (c) => c.primaryKey()).addColumn('label', 'text', (c) => c.notNull()).addColumn('total', 'integer', (c) => c.notNull()).execute()
    await run(storage, db)
  } finally {
    await storage.close()
    await database.drop()
  }
}

const stored = async (db: Kysely<any>) => Object.fromEntries((await db.selectFrom('tallies').selectAll().orderBy('id').execute()).map((row) => [row.id, [row.label, Number(row.total)]]))

for (const dialect of DIALECTS) {
  describe(`Storage.writeRows on ${dialect}`, () => {
    test('binds each row by column name, whatever order or extra keys its object has, at lengths compiled before and not', async () => {
      await withTallies(dialect, async (storage, db) => {
        const write = (rows: object[]) => db.transaction().execute((trx) => storage.writeRows(trx, TALLY_UPSERT, rows as Tally[]))
        await write([{ id: 'a', label: 'first', total: 1 }, { total: 2, id: 'b', label: 'second' }, { label: 'third', extra: 'ignored', total: 3, id: 'c' }])
        // Three rows again: the statement compiled for three runs with these rows' values.
        await write([{ id: 'c', label: 'third again', total: 30 }, { id: 'd', label: 'fourth', total: 4 }, { id: 'a', label: 'first again', total: 10 }])
        // Past the lengths kept compiled.
        await write(Array.from({ length: 100 }, (_, index) => ({ total: index, label: `many ${index}`, id: `m${String(index).padStart(3, '0')}` })))
        const rows = await stored(db)
        assert.deepEqual(rows.a, ['first again', 11])
        assert.deepEqual(rows.b, ['second', 2])
        assert.deepEqual(rows.c, ['third again', 33])
        assert.deepEqual(rows.d, ['fourth', 4])
        assert.deepEqual(rows.m042, ['many 42', 42])
        assert.equal(Object.keys(rows).length, 104)
      })
    })

    test('a row the database refuses fails the transaction and leaves none of its rows', async () => {
      await withTallies(dialect, async (storage, db) => {
        const rows = [{ id: 'a', label: 'kept?', total: 1 }, { id: 'b', label: null, total: 2 }] as unknown as Tally[]
        await assert.rejects(db.transaction().execute((trx) => storage.writeRows(trx, TALLY_UPSERT, rows)), /not.?null/i)
        assert.deepEqual(await stored(db), {})
      })
    })

    test('refuses to run outside a transaction', async () => {
      await withTallies(dialect, async (storage, db) => {
        await assert.rejects(storage.writeRows(db, TALLY_UPSERT, [{ id: 'a', label: 'x', total: 1 }]), /writeRows runs inside a transaction/)
        assert.deepEqual(await stored(db), {})
      })
    })
  })
}
