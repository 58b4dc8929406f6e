// (a) The log table as the portal creates it today (its real migrations: a row per event with the data
// JSON, the id primary key and three newest-first indexes), plus the hourly level counts kept at ingest.
import path from 'node:path'
import SQLite from '../../src/storage/sqlite/better-sqlite3.ts'
import { allMigrations } from '../../src/portal.ts'
import { migrate } from '../../src/storage/migrations.ts'
import { openStorage } from '../../src/storage/open-storage.ts'
import { likePattern } from '../../src/storage/storage.ts'
import { PROJECT_ID, countLevelsByHours, levelHourRows, type BenchEvent, type Candidate, type EventStore, type ReadEvent } from './workload.ts'

/** A connection set up as the portal's (WAL, 8 MiB cache), with each COMMIT fsynced (synchronous = full). */
export function openPortalSqlite(file: string): SQLite.Database {
  const database = new SQLite(file)
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = full')
  database.pragma('cache_size = -8192')
  return database
}

const toReadEvent = (row: { id: string; ts: number; received_at: number; data: string }): ReadEvent => ({ id: row.id, ts: row.ts, receivedAt: row.received_at, data: JSON.parse(row.data) })

export const sqliteToday: Candidate = {
  name: 'sqlite today',
  layout: 'log_events row per event (id pk, data JSON, 3 desc indexes) + log_level_hours, portal migrations',
  async open(dir) {
    const file = path.join(dir, 'portal.db')
    const storage = await openStorage(`sqlite:${file}`, { poolSize: 1, queryTimeoutMs: 0, sqliteSynchronous: 'full' })
    await migrate(storage, allMigrations)
    await storage.close()
    const database = openPortalSqlite(file)
    const insert = new Map<number, SQLite.Statement>()
    const insertRows = (count: number) => {
      let statement = insert.get(count)
      if (!statement) {
        statement = database.prepare(`insert into log_events (id, project_id, ts, received_at, data, level, module, message) values ${Array(count).fill('(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`)
        insert.set(count, statement)
      }
      return statement
    }
    const countHour = database.prepare(
      'insert into log_level_hours (project_id, hour, level_key, level, events) values (?, ?, ?, ?, ?) on conflict do update set events = events + excluded.events',
    )
    // As ingest writes: one multi-row insert per 100-event batch, then the hourly counts.
    const write = database.transaction((events: BenchEvent[]) => {
      for (let start = 0; start < events.length; start += 100) {
        const batch = events.slice(start, start + 100)
        const values: unknown[] = []
        for (const e of batch) values.push(e.id, PROJECT_ID, e.ts, e.receivedAt, e.dataJson, e.data.level ?? null, e.data.module ?? null, e.data.message)
        insertRows(batch.length).run(values)
      }
      for (const row of levelHourRows(events)) countHour.run(PROJECT_ID, row.hour, row.levelKey, row.level, row.events)
    })
    const newest = database.prepare(
      'select id, ts, received_at, data from log_events where project_id = ? and module = ? and level = ? order by ts desc, id desc limit ?',
    )
    const search = database.prepare(
      "select id, ts, received_at, data from log_events where project_id = ? and ts >= ? and ts < ? and message like ? escape '\\' order by ts desc, id desc limit ?",
    )
    const countHours = database.prepare('select level, sum(events) as count from log_level_hours where project_id = ? and hour >= ? and hour < ? group by level')
    const countEvents = database.prepare('select level, count(*) as count from log_events where project_id = ? and ts >= ? and ts < ? group by level')
    const store: EventStore = {
      append: async (events) => write(events),
      newest: async (module, level, limit) => (newest.all(PROJECT_ID, module, level, limit) as any[]).map(toReadEvent),
      search: async (text, from, to, limit) => (search.all(PROJECT_ID, from, to, likePattern(text), limit) as any[]).map(toReadEvent),
      countLevels: (from, to) =>
        countLevelsByHours(
          from,
          to,
          (fromHour, toHour) => countHours.all(PROJECT_ID, fromHour, toHour) as any[],
          async (fromMs, toMs) => countEvents.all(PROJECT_ID, fromMs, toMs) as any[],
        ),
      close: async () => void database.close(),
    }
    return store
  },
}
