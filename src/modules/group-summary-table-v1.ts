import type { MigrationDb } from '../storage/migrations.ts'
import type { ColumnTypes } from '../storage/storage.ts'

/**
 * Creates a group summary table as it was first laid out, and fills it from the events already
 * stored: one row per project and group (a flag key, a job, a service in an environment) with its
 * event count, first and latest time, and latest event; events whose first group column is null form no
 * group. Frozen: later changes are new migrations.
 */
export async function createGroupSummaryTableV1(db: MigrationDb, t: ColumnTypes, table: string, eventTable: string, columns: string[]): Promise<void> {
  let builder = db.schema
    .createTable(table)
    .ifNotExists()
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
  for (const column of columns) builder = builder.addColumn(column, 'text')
  await builder
    .addColumn('events', t.bigint, (c) => c.notNull())
    .addColumn('first_ts', t.bigint, (c) => c.notNull())
    .addColumn('last_ts', t.bigint, (c) => c.notNull())
    .addColumn('last_event_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pk`, ['project_id', 'group_key'])
    .execute()
  await db.schema.createIndex(`${table}_recent_idx`).ifNotExists().on(table).columns(['project_id', 'last_ts desc', 'group_key']).execute()

  const groups = new Map<string, Record<string, unknown>>()
  const events = await db.selectFrom(eventTable).select(['id', 'project_id', 'ts', ...columns]).where(columns[0], 'is not', null).orderBy('ts').orderBy('id').execute()
  for (const event of events) {
    const groupKey = JSON.stringify(columns.map((column) => event[column] ?? null))
    const key = `${event.project_id} ${groupKey}`
    const group = groups.get(key)
    if (group) {
      group.events = Number(group.events) + 1
      group.last_ts = Number(event.ts)
      group.last_event_id = event.id
      continue
    }
    const values = Object.fromEntries(columns.map((column) => [column, event[column] ?? null]))
    groups.set(key, { project_id: event.project_id, group_key: groupKey, ...values, events: 1, first_ts: Number(event.ts), last_ts: Number(event.ts), last_event_id: event.id })
  }
  const rows = [...groups.values()]
  for (let start = 0; start < rows.length; start += 1000) await db.insertInto(table).values(rows.slice(start, start + 1000)).execute()
}
