import { sql } from 'kysely'
import type { MigrationDb } from '../storage/migrations.ts'
import type { ColumnTypes } from '../storage/storage.ts'

/**
 * Creates a group summary's hourly table as it was first laid out, and fills it from the events already
 * stored: per project, UTC hour and group (a path, a branch), the event count and first and latest time,
 * so a count over a window of weeks reads hours, not events; events whose first group column is null
 * form no group. Frozen: later changes are new migrations.
 */
export async function createGroupHoursTableV1(db: MigrationDb, t: ColumnTypes, table: string, eventTable: string, columns: string[]): Promise<void> {
  let builder = db.schema
    .createTable(table)
    .ifNotExists()
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('hour', t.bigint, (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
  for (const column of columns) builder = builder.addColumn(column, 'text')
  await builder
    .addColumn('events', t.bigint, (c) => c.notNull())
    .addColumn('first_ts', t.bigint, (c) => c.notNull())
    .addColumn('last_ts', t.bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pk`, ['project_id', 'hour', 'group_key'])
    .execute()

  const hour = sql<number>`(ts / 3600000) * 3600000`
  const counts = await db
    .selectFrom(eventTable)
    .select((eb) => ['project_id', hour.as('hour'), ...columns, eb.fn.countAll().as('events'), eb.fn.min('ts').as('first_ts'), eb.fn.max('ts').as('last_ts')])
    .where(columns[0], 'is not', null)
    .groupBy(['project_id', hour, ...columns])
    .execute()
  const rows = counts.map((row) => ({
    ...row,
    hour: Number(row.hour),
    group_key: JSON.stringify(columns.map((column) => row[column] ?? null)),
    events: Number(row.events),
    first_ts: Number(row.first_ts),
    last_ts: Number(row.last_ts),
  }))
  for (let start = 0; start < rows.length; start += 500) await db.insertInto(table).values(rows.slice(start, start + 500)).execute()
}
