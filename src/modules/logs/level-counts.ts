import { sql, type Kysely } from 'kysely'
import type { StoredEvent, TablesByName } from '../module.ts'
import type { LogPayload } from './payload.ts'
import type { Static } from 'typebox'
import { rowWrite, type Storage } from '../../storage/storage.ts'
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

/** A row of either level count table: its time column is `hour`, or `ts` for the minutes. */
interface LevelCountRow {
  [column: string]: unknown
  project_id: string
  hour?: number
  ts?: number
  level_key: string
  shard: number
  level: string | null
  events: number
}

/**
 * Adds to a level count per row, written as `writeRows` writes (on SQLite, one prepared statement a row), rather than
 * one statement of all a group commit's rows, compiled and prepared again for each row count.
 */
const levelCountUpsert = (table: 'log_level_hours' | 'log_level_minutes', timeColumn: 'hour' | 'ts') =>
  rowWrite<LevelCountRow>(['project_id', timeColumn, 'level_key', 'shard', 'level', 'events'], (db, rows) =>
    tablesOf<TablesByName>(db)
      .insertInto(table)
      .values(rows)
      .onConflict((conflict) => conflict.columns(['project_id', timeColumn, 'level_key', 'shard']).doUpdateSet({ events: sql`${sql.ref(`${table}.events`)} + excluded.events` })),
  )
const HOUR_UPSERT = levelCountUpsert('log_level_hours', 'hour')
const MINUTE_UPSERT = levelCountUpsert('log_level_minutes', 'ts')

/**
 * Adds a batch of logs to the level counts, in the ingest transaction: per hour, for counts over weeks, and per
 * minute, for the alert rules that count logs by level (src/modules/logs/signals.ts).
 */
export async function countLevelsAtIngest(trx: Kysely<Database>, storage: Storage, events: StoredEvent<Static<typeof LogPayload>>[]): Promise<void> {
  const { hours, minutes } = levelCounts(events, Math.floor(Math.random() * LEVEL_COUNT_SHARDS))
  await storage.writeRows(trx, HOUR_UPSERT, hours)
  await storage.writeRows(trx, MINUTE_UPSERT, minutes)
}

/** One project's logs of one level in a batch, counted per minute. */
interface LevelMinutes {
  projectId: string
  level: string | null
  levelKey: string
  minutes: Map<number, number>
}

/**
 * The batch's counts per project, level and minute, and per hour, each in one order for every writer (project, time,
 * level), so that concurrent upserts on PostgreSQL lock rows in the same order. Counted per project and level first:
 * a key string built for each event and span was most of the CPU of counting.
 */
function levelCounts(events: StoredEvent<Static<typeof LogPayload>>[], shard: number): { hours: LevelCountRow[]; minutes: LevelCountRow[] } {
  const groups = new Map<string, Map<string | null, LevelMinutes>>()
  for (const event of events) {
    const level = event.data.level ?? null
    let levels = groups.get(event.projectId)
    if (!levels) groups.set(event.projectId, (levels = new Map()))
    let group = levels.get(level)
    if (!group) levels.set(level, (group = { projectId: event.projectId, level, levelKey: JSON.stringify(level), minutes: new Map() }))
    const minute = Math.floor(event.ts / MINUTE_MS) * MINUTE_MS
    group.minutes.set(minute, (group.minutes.get(minute) ?? 0) + 1)
  }
  const hours: LevelCountRow[] = []
  const minutes: LevelCountRow[] = []
  for (const levels of groups.values()) {
    for (const group of levels.values()) {
      const byHour = new Map<number, number>()
      for (const [minute, count] of group.minutes) {
        minutes.push({ project_id: group.projectId, ts: minute, level_key: group.levelKey, shard, level: group.level, events: count })
        const hour = startOfHour(minute)
        byHour.set(hour, (byHour.get(hour) ?? 0) + count)
      }
      for (const [hour, count] of byHour) hours.push({ project_id: group.projectId, hour, level_key: group.levelKey, shard, level: group.level, events: count })
    }
  }
  const inOrder = (time: 'hour' | 'ts') => (a: LevelCountRow, b: LevelCountRow) =>
    a.project_id !== b.project_id ? (a.project_id < b.project_id ? -1 : 1) : a[time] !== b[time] ? Number(a[time]) - Number(b[time]) : a.level_key < b.level_key ? -1 : a.level_key > b.level_key ? 1 : 0
  return { hours: hours.sort(inOrder('hour')), minutes: minutes.sort(inOrder('ts')) }
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
