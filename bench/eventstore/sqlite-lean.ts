// (b1) A leaner row layout in SQLite: one table clustered on (project, time, id) (WITHOUT ROWID, so no
// separate time index and no rowid), two ascending secondary indexes, the project as a small integer,
// and the data JSON without the level, module and message it already has as columns.
import path from 'node:path'
import type SQLite from '../../src/storage/sqlite/better-sqlite3.ts'
import { likePattern } from '../../src/storage/storage.ts'
import { openPortalSqlite } from './sqlite-today.ts'
import { PROJECT_ID, countLevelsByHours, levelHourRows, type BenchEvent, type Candidate, type LogData, type ReadEvent } from './workload.ts'

const SCHEMA = `
  create table if not exists log_projects (project integer primary key, project_id text not null unique);
  create table if not exists log_rows (
    project integer not null, ts integer not null, id text not null, received_at integer not null,
    level text, module text, message text not null, rest text,
    primary key (project, ts, id)
  ) without rowid;
  create index if not exists log_rows_level_idx on log_rows (project, level, ts, id);
  create index if not exists log_rows_module_idx on log_rows (project, module, ts, id);
  create table if not exists log_level_hours (
    project integer not null, hour integer not null, level_key text not null, level text, events integer not null,
    primary key (project, hour, level_key)
  ) without rowid;
`

/** The data without the keys stored as columns; null when nothing is left. */
function restOf(data: LogData): string | null {
  const { level: _level, module: _module, message: _message, ...rest } = data
  return Object.keys(rest).length === 0 ? null : JSON.stringify(rest)
}

function toReadEvent(row: { id: string; ts: number; received_at: number; level: string | null; module: string | null; message: string; rest: string | null }): ReadEvent {
  const data: LogData = { message: row.message, ...(row.rest === null ? {} : JSON.parse(row.rest)) }
  if (row.level !== null) data.level = row.level
  if (row.module !== null) data.module = row.module
  return { id: row.id, ts: row.ts, receivedAt: row.received_at, data }
}

export const sqliteLean: Candidate = {
  name: 'sqlite lean rows',
  layout: 'row per event clustered on (project, ts, id) without rowid, 2 asc indexes, int project, data JSON minus columns',
  async open(dir) {
    const database = openPortalSqlite(path.join(dir, 'events.db'))
    database.exec(SCHEMA)
    database.prepare('insert into log_projects (project_id) values (?) on conflict do nothing').run(PROJECT_ID)
    const project = (database.prepare('select project from log_projects where project_id = ?').get(PROJECT_ID) as { project: number }).project
    const insert = new Map<number, SQLite.Statement>()
    const insertRows = (count: number) => {
      let statement = insert.get(count)
      if (!statement) {
        statement = database.prepare(`insert into log_rows (project, ts, id, received_at, level, module, message, rest) values ${Array(count).fill('(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`)
        insert.set(count, statement)
      }
      return statement
    }
    const countHour = database.prepare(
      'insert into log_level_hours (project, hour, level_key, level, events) values (?, ?, ?, ?, ?) on conflict do update set events = events + excluded.events',
    )
    const write = database.transaction((events: BenchEvent[]) => {
      for (let start = 0; start < events.length; start += 100) {
        const batch = events.slice(start, start + 100)
        const values: unknown[] = []
        for (const e of batch) values.push(project, e.ts, e.id, e.receivedAt, e.data.level ?? null, e.data.module ?? null, e.data.message, restOf(e.data))
        insertRows(batch.length).run(values)
      }
      for (const row of levelHourRows(events)) countHour.run(project, row.hour, row.levelKey, row.level, row.events)
    })
    const columns = 'id, ts, received_at, level, module, message, rest'
    const newest = database.prepare(`select ${columns} from log_rows where project = ? and module = ? and level = ? order by ts desc, id desc limit ?`)
    const search = database.prepare(`select ${columns} from log_rows where project = ? and ts >= ? and ts < ? and message like ? escape '\\' order by ts desc, id desc limit ?`)
    const countHours = database.prepare('select level, sum(events) as count from log_level_hours where project = ? and hour >= ? and hour < ? group by level')
    const countEvents = database.prepare('select level, count(*) as count from log_rows where project = ? and ts >= ? and ts < ? group by level')
    return {
      append: async (events) => write(events),
      newest: async (module, level, limit) => (newest.all(project, module, level, limit) as any[]).map(toReadEvent),
      search: async (text, from, to, limit) => (search.all(project, from, to, likePattern(text), limit) as any[]).map(toReadEvent),
      countLevels: (from, to) =>
        countLevelsByHours(
          from,
          to,
          (fromHour, toHour) => countHours.all(project, fromHour, toHour) as any[],
          async (fromMs, toMs) => countEvents.all(project, fromMs, toMs) as any[],
        ),
      close: async () => void database.close(),
    }
  },
}
