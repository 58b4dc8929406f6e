import { sql, type Kysely } from 'kysely'
import { MAX_VALUES_PER_STATEMENT } from '../storage/storage.ts'
import type { Database } from '../storage/tables.ts'
import type { EventModule, EventTableRow, GroupSummary, TablesByName } from './module.ts'

interface SummaryRow {
  project_id: string
  group_key: string
  events: number
  first_ts: number
  last_ts: number
  last_event_id: string
  [column: string]: unknown
}

/** The key of a group in its summary table: its column values as a JSON array (nulls included). */
export function groupKeyOf(columns: string[], row: Record<string, unknown>): string {
  return JSON.stringify(columns.map((column) => row[column] ?? null))
}

/**
 * Folds inserted event rows into the module's group summaries, in the same transaction. Events may
 * arrive out of time order: the latest event is the greatest (ts, id), whenever it was written.
 */
export async function updateGroupSummaries(trx: Kysely<Database>, module: EventModule, rows: EventTableRow[]): Promise<void> {
  for (const summary of Object.values(module.summaries ?? {})) {
    const groups = new Map<string, SummaryRow>()
    for (const row of rows) {
      if (row[summary.columns[0]] === null || row[summary.columns[0]] === undefined) continue
      const groupKey = groupKeyOf(summary.columns, row)
      const mapKey = `${row.project_id} ${groupKey}`
      const group = groups.get(mapKey)
      if (!group) {
        const values = Object.fromEntries(summary.columns.map((column) => [column, row[column] ?? null]))
        groups.set(mapKey, { project_id: row.project_id, group_key: groupKey, ...values, events: 1, first_ts: row.ts, last_ts: row.ts, last_event_id: row.id, ...latestOf(summary, row) })
        continue
      }
      group.events += 1
      if (row.ts < group.first_ts) group.first_ts = row.ts
      if (row.ts > group.last_ts || (row.ts === group.last_ts && row.id > group.last_event_id)) {
        group.last_ts = row.ts
        group.last_event_id = row.id
        Object.assign(group, latestOf(summary, row))
      }
    }
    // One order for every writer, so that concurrent upserts on PostgreSQL lock rows in the same order.
    const sorted = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, group]) => group)
    const rowsPerStatement = Math.floor(MAX_VALUES_PER_STATEMENT / (summary.columns.length + (summary.latest?.length ?? 0) + 6))
    for (let start = 0; start < sorted.length; start += rowsPerStatement) await upsert(trx, summary, sorted.slice(start, start + rowsPerStatement))
  }
}

/** The summary's copies of `row`'s latest columns (`GroupSummary.latest`). */
function latestOf(summary: GroupSummary, row: EventTableRow): Record<string, unknown> {
  return Object.fromEntries((summary.latest ?? []).map((column) => [`latest_${column}`, row[column] ?? null]))
}

async function upsert(trx: Kysely<Database>, summary: GroupSummary, rows: SummaryRow[]): Promise<void> {
  const current = (column: string) => sql.ref(`${summary.table}.${column}`)
  const newer = sql`(excluded.last_ts, excluded.last_event_id) > (${current('last_ts')}, ${current('last_event_id')})`
  const latest = (summary.latest ?? []).map((column) => `latest_${column}`)
  await trx
    .withTables<TablesByName>()
    .insertInto(summary.table)
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(['project_id', 'group_key']).doUpdateSet({
        events: sql`${current('events')} + excluded.events`,
        first_ts: sql`case when excluded.first_ts < ${current('first_ts')} then excluded.first_ts else ${current('first_ts')} end`,
        last_ts: sql`case when excluded.last_ts > ${current('last_ts')} then excluded.last_ts else ${current('last_ts')} end`,
        last_event_id: sql`case when ${newer} then excluded.last_event_id else ${current('last_event_id')} end`,
        ...Object.fromEntries(latest.map((column) => [column, sql`case when ${newer} then ${sql.ref(`excluded.${column}`)} else ${current(column)} end`])),
      }),
    )
    .execute()
}
