import { sql, type Kysely } from 'kysely'
import type { PortalContext } from '../context.ts'
import { MAX_VALUES_PER_STATEMENT } from '../storage/storage.ts'
import type { Database } from '../storage/tables.ts'
import { groupKeyOf } from './group-summaries.ts'
import type { EventModule, EventTableRow, GroupSummary, TablesByName } from './module.ts'
import { eventsDb, moduleDb } from './read-route.ts'

const HOUR_MS = 3_600_000

/** A group's events, first and latest time within a window, as the group reads compute them from events. */
export interface GroupCounts {
  events: number
  first_ts: number
  last_ts: number
  [column: string]: unknown
}

/** A row of an hourly table as ingest writes it: a group's counts in one project and UTC hour. */
type HourRow = GroupCounts & { project_id: string; hour: number; group_key: string }

/** Folds inserted event rows into the hourly counts of the module's summaries that keep them, in the same transaction, in any time order. */
export async function updateGroupHours(trx: Kysely<Database>, module: EventModule, rows: EventTableRow[]): Promise<void> {
  for (const summary of Object.values(module.summaries ?? {})) if (summary.hours !== undefined) await upsertHours(trx, summary, summary.hours, rows)
}

async function upsertHours(trx: Kysely<Database>, summary: GroupSummary, hoursTable: string, rows: EventTableRow[]): Promise<void> {
  const hours = new Map<string, HourRow>()
  for (const row of rows) {
    if (row[summary.columns[0]] === null || row[summary.columns[0]] === undefined) continue
    const hour = Math.floor(row.ts / HOUR_MS) * HOUR_MS
    const groupKey = groupKeyOf(summary.columns, row)
    const mapKey = `${row.project_id} ${hour} ${groupKey}`
    const counted = hours.get(mapKey)
    if (!counted) {
      const values = Object.fromEntries(summary.columns.map((column) => [column, row[column] ?? null]))
      hours.set(mapKey, { project_id: row.project_id, hour, group_key: groupKey, ...values, events: 1, first_ts: row.ts, last_ts: row.ts })
      continue
    }
    counted.events += 1
    if (row.ts < counted.first_ts) counted.first_ts = row.ts
    if (row.ts > counted.last_ts) counted.last_ts = row.ts
  }
  // One order for every writer, so that concurrent upserts on PostgreSQL lock rows in the same order.
  const sorted = [...hours.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, counted]) => counted)
  const rowsPerStatement = Math.floor(MAX_VALUES_PER_STATEMENT / (summary.columns.length + 6))
  const current = (column: string) => sql.ref(`${hoursTable}.${column}`)
  for (let start = 0; start < sorted.length; start += rowsPerStatement) {
    await trx
      .withTables<TablesByName>()
      .insertInto(hoursTable)
      .values(sorted.slice(start, start + rowsPerStatement))
      .onConflict((conflict) =>
        conflict.columns(['project_id', 'hour', 'group_key']).doUpdateSet({
          events: sql`${current('events')} + excluded.events`,
          first_ts: sql`case when excluded.first_ts < ${current('first_ts')} then excluded.first_ts else ${current('first_ts')} end`,
          last_ts: sql`case when excluded.last_ts > ${current('last_ts')} then excluded.last_ts else ${current('last_ts')} end`,
        }),
      )
      .execute()
  }
}

/**
 * Per group with events in [fromMs, toMs) (either end open), its events, first and latest time: whole
 * hours from the summary's hourly counts, the partial hours at the ends from the events. Undefined when
 * the window holds no whole hour, where the events alone are as quick.
 */
export async function groupCountsOverWindow(
  ctx: PortalContext,
  spec: { table: string; projectId: string; summary: GroupSummary & { hours: string }; groups: Record<string, string>; fromMs?: number; toMs?: number },
): Promise<GroupCounts[] | undefined> {
  const firstWholeHour = spec.fromMs === undefined ? undefined : Math.ceil(spec.fromMs / HOUR_MS) * HOUR_MS
  const endOfWholeHours = spec.toMs === undefined ? undefined : Math.floor(spec.toMs / HOUR_MS) * HOUR_MS
  if (firstWholeHour !== undefined && endOfWholeHours !== undefined && firstWholeHour >= endOfWholeHours) return undefined
  const db = moduleDb(ctx)
  const columns = spec.summary.columns

  let hours = db
    .selectFrom(spec.summary.hours)
    .select((eb) => [...columns, eb.fn.sum('events').as('events'), eb.fn.min('first_ts').as('first_ts'), eb.fn.max('last_ts').as('last_ts')])
    .where('project_id', '=', spec.projectId)
  for (const [column, value] of Object.entries(spec.groups)) hours = hours.where(column, '=', value)
  if (firstWholeHour !== undefined) hours = hours.where('hour', '>=', firstWholeHour)
  if (endOfWholeHours !== undefined) hours = hours.where('hour', '<', endOfWholeHours)
  // The hourly counts are state; the partial hours come from wherever the events are.
  const countEvents = (from: number, to: number) =>
    eventsDb(ctx, spec.table)
      .selectFrom(spec.table)
      .select((eb) => [...columns, eb.fn.countAll().as('events'), eb.fn.min('ts').as('first_ts'), eb.fn.max('ts').as('last_ts')])
      .where('project_id', '=', spec.projectId)
      .where('ts', '>=', from)
      .where('ts', '<', to)
      .groupBy(columns)
      .execute()
  const parts = [hours.groupBy(columns).execute()]
  if (spec.fromMs !== undefined && spec.fromMs < firstWholeHour!) parts.push(countEvents(spec.fromMs, firstWholeHour!))
  if (spec.toMs !== undefined && endOfWholeHours! < spec.toMs) parts.push(countEvents(endOfWholeHours!, spec.toMs))

  const merged = new Map<string, GroupCounts>()
  for (const row of (await Promise.all(parts)).flat()) {
    // Events without the first group column form no group, and only the groups asked for count. Not conditions of
    // the query: SQLite would then walk a group column's index over all the project's events, not an hour or two.
    if (row[columns[0]] === null || Object.entries(spec.groups).some(([column, value]) => row[column] !== value)) continue
    const key = groupKeyOf(columns, row)
    const counted = { ...row, events: Number(row.events), first_ts: Number(row.first_ts), last_ts: Number(row.last_ts) }
    const before = merged.get(key)
    merged.set(
      key,
      before ? { ...before, events: before.events + counted.events, first_ts: Math.min(before.first_ts, counted.first_ts), last_ts: Math.max(before.last_ts, counted.last_ts) } : counted,
    )
  }
  return [...merged.values()]
}
