import type { MigrationDb } from '../storage/migrations.ts'
import type { ColumnTypes } from '../storage/storage.ts'

const BACKFILL_ROWS_PER_READ = 5_000

/**
 * Adds a column that copies an optional payload field which not every event repeats (a video job's artifact
 * URL, a tenant's limit), fills it from the events already stored, and indexes the rows that have it per group
 * and time: the latest value a group was given is then one probe of that partial index, however many of the
 * group's events lack it. Frozen: later changes are new migrations.
 */
export async function addFieldColumnV1(db: MigrationDb, t: ColumnTypes, table: string, column: string, type: 'text' | 'bigint', field: string, groupColumn: string): Promise<void> {
  await db.schema.alterTable(table).addColumn(column, type === 'bigint' ? t.bigint : 'text').execute()
  let after = ''
  for (;;) {
    const rows = await db.selectFrom(table).select(['id', 'data']).where('id', '>', after).orderBy('id').limit(BACKFILL_ROWS_PER_READ).execute()
    if (rows.length === 0) break
    after = rows[rows.length - 1].id
    for (const row of rows) {
      // jsonb arrives parsed from PostgreSQL, text from SQLite
      const value = (typeof row.data === 'string' ? JSON.parse(row.data) : row.data)[field]
      if (value !== undefined && value !== null) await db.updateTable(table).set({ [column]: value }).where('id', '=', row.id).execute()
    }
  }
  // Covering (the value is its last column): without statistics SQLite cannot tell this index from the group
  // column's index of the same leading columns, which holds every event, but it prefers the one that covers.
  await db.schema
    .createIndex(`${table}_${column}_idx`)
    .ifNotExists()
    .on(table)
    .columns(['project_id', groupColumn, 'ts', 'id', column])
    .where(column, 'is not', null)
    .execute()
}
