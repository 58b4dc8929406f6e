import { sql, type Kysely } from 'kysely'
import type { StoredEvent } from '../module.ts'
import type { LogPayload } from './payload.ts'
import type { Static } from 'typebox'
import { tablesOf, type Database } from '../../storage/tables.ts'
import type { LogTables } from './tables.ts'

export const HOUR_MS = 3_600_000

const startOfHour = (ts: number) => Math.floor(ts / HOUR_MS) * HOUR_MS

/**
 * Rows each hour's count of a level is spread over. Each transaction adds to one shard picked at
 * random, so the portals sharing a database seldom wait for each other's commit on one counter row.
 */
export const LEVEL_HOUR_SHARDS = 8

/** Adds a batch of logs to the per-hour level counts, in the ingest transaction. */
export async function countLevelHours(trx: Kysely<Database>, events: StoredEvent<Static<typeof LogPayload>>[]): Promise<void> {
  const shard = Math.floor(Math.random() * LEVEL_HOUR_SHARDS)
  const counts = new Map<string, { project_id: string; hour: number; level_key: string; shard: number; level: string | null; events: number }>()
  for (const event of events) {
    const level = event.data.level ?? null
    const row = { project_id: event.projectId, hour: startOfHour(event.ts), level_key: JSON.stringify(level), shard, level, events: 1 }
    const key = `${row.project_id} ${row.hour} ${row.level_key}`
    const counted = counts.get(key)
    if (counted) counted.events += 1
    else counts.set(key, row)
  }
  // One order for every writer, so that concurrent upserts on PostgreSQL lock rows in the same order.
  const rows = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)
  for (let start = 0; start < rows.length; start += 5000) {
    await tablesOf<LogTables>(trx)
      .insertInto('log_level_hours')
      .values(rows.slice(start, start + 5000))
      .onConflict((conflict) => conflict.columns(['project_id', 'hour', 'level_key', 'shard']).doUpdateSet({ events: sql`${sql.ref('log_level_hours.events')} + excluded.events` }))
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
