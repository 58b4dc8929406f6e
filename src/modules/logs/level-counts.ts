import { sql, type Kysely } from 'kysely'
import type { StoredEvent, TablesByName } from '../module.ts'
import type { LogPayload } from './payload.ts'
import type { Static } from 'typebox'
import { tablesOf, type Database } from '../../storage/tables.ts'
import type { LogTables } from './tables.ts'

export const HOUR_MS = 3_600_000
const MINUTE_MS = 60_000

const startOfHour = (ts: number) => Math.floor(ts / HOUR_MS) * HOUR_MS

/**
 * Rows each hour's (and minute's) count of a level is spread over. Each transaction adds to one shard picked at
 * random, so the portals sharing a database seldom wait for each other's commit on one counter row.
 */
export const LEVEL_COUNT_SHARDS = 8

/**
 * Adds a batch of logs to the level counts, in the ingest transaction: per hour, for counts over weeks, and per
 * minute, for the alert rules that count logs by level (src/modules/logs/signals.ts).
 */
export async function countLevelsAtIngest(trx: Kysely<Database>, events: StoredEvent<Static<typeof LogPayload>>[]): Promise<void> {
  const shard = Math.floor(Math.random() * LEVEL_COUNT_SHARDS)
  await addCounts(trx, 'log_level_hours', 'hour', HOUR_MS, events, shard)
  await addCounts(trx, 'log_level_minutes', 'ts', MINUTE_MS, events, shard)
}

async function addCounts(
  trx: Kysely<Database>,
  table: 'log_level_hours' | 'log_level_minutes',
  timeColumn: 'hour' | 'ts',
  spanMs: number,
  events: StoredEvent<Static<typeof LogPayload>>[],
  shard: number,
): Promise<void> {
  const counts = new Map<string, Record<string, unknown> & { events: number }>()
  for (const event of events) {
    const level = event.data.level ?? null
    const start = Math.floor(event.ts / spanMs) * spanMs
    const levelKey = JSON.stringify(level)
    const key = `${event.projectId} ${start} ${levelKey}`
    const counted = counts.get(key)
    if (counted) counted.events += 1
    else counts.set(key, { project_id: event.projectId, [timeColumn]: start, level_key: levelKey, shard, level, events: 1 })
  }
  // One order for every writer, so that concurrent upserts on PostgreSQL lock rows in the same order.
  const rows = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)
  for (let start = 0; start < rows.length; start += 5000) {
    await tablesOf<TablesByName>(trx)
      .insertInto(table)
      .values(rows.slice(start, start + 5000))
      .onConflict((conflict) => conflict.columns(['project_id', timeColumn, 'level_key', 'shard']).doUpdateSet({ events: sql`${sql.ref(`${table}.events`)} + excluded.events` }))
      .execute()
  }
}

/**
 * Counts per level of a project's logs in [from, to): whole hours from the hourly counts (all shards), and the
 * partial hours at either end from the logs themselves.
 */
export async function countLevels(
  db: Kysely<Database & LogTables>,
  projectId: string,
  fromMs: number | undefined,
  toMs: number | undefined,
  countLogs: (from: number | undefined, to: number | undefined) => { execute(): Promise<{ level: string | null; count: unknown }[]> },
): Promise<{ level: string | null; count: number }[]> {
  const firstWholeHour = fromMs === undefined ? undefined : Math.ceil(fromMs / HOUR_MS) * HOUR_MS
  const endOfWholeHours = toMs === undefined ? undefined : startOfHour(toMs)
  if (firstWholeHour !== undefined && endOfWholeHours !== undefined && firstWholeHour >= endOfWholeHours) return tally([await countLogs(fromMs, toMs).execute()])

  let wholeHours = db.selectFrom('log_level_hours').select((eb) => ['level', eb.fn.sum('events').as('count')]).where('project_id', '=', projectId).groupBy('level')
  if (firstWholeHour !== undefined) wholeHours = wholeHours.where('hour', '>=', firstWholeHour)
  if (endOfWholeHours !== undefined) wholeHours = wholeHours.where('hour', '<', endOfWholeHours)
  const parts: Promise<Record<string, unknown>[]>[] = [wholeHours.execute()]
  if (fromMs !== undefined && firstWholeHour !== fromMs) parts.push(countLogs(fromMs, firstWholeHour).execute())
  if (toMs !== undefined && endOfWholeHours !== toMs) parts.push(countLogs(endOfWholeHours, toMs).execute())
  return tally(await Promise.all(parts))
}

function tally(parts: Record<string, unknown>[][]): { level: string | null; count: number }[] {
  const counts = new Map<string | null, number>()
  for (const row of parts.flat()) {
    const level = (row.level ?? null) as string | null
    counts.set(level, (counts.get(level) ?? 0) + Number(row.count))
  }
  return [...counts].map(([level, count]) => ({ level, count })).filter((row) => row.count > 0)
}
