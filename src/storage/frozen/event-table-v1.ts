import type { MigrationDb } from '../migrations.ts'
import type { ColumnTypes } from '../storage.ts'

/**
 * Creates a module's event table as it was first laid out: the common columns, the module's own
 * indexed columns, and an index for the newest-first list of a project. Frozen: migrations that
 * change a table later say so in a migration of their own, never by editing this.
 */
export async function createEventTableV1(
  db: MigrationDb,
  t: ColumnTypes,
  table: string,
  columns: [name: string, type: 'text' | 'integer' | 'bigint' | 'double'][],
  indexes: string[][] = [],
): Promise<void> {
  let builder = db.schema
    .createTable(table)
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('ts', t.bigint, (c) => c.notNull())
    .addColumn('received_at', t.bigint, (c) => c.notNull())
    .addColumn('data', t.json, (c) => c.notNull())
  for (const [name, type] of columns) {
    builder = builder.addColumn(name, type === 'bigint' ? t.bigint : type === 'double' ? t.double : type)
  }
  await builder.execute()
  await db.schema.createIndex(`${table}_project_ts_idx`).ifNotExists().on(table).columns(['project_id', 'ts desc', 'id desc']).execute()
  for (const index of indexes) {
    await db.schema
      .createIndex(`${table}_${index.join('_').replace(/ desc/g, '')}_idx`)
      .ifNotExists()
      .on(table)
      .columns(['project_id', ...index, 'ts desc', 'id desc'])
      .execute()
  }
}
