// (c) DuckDB (columnar, compressed row groups with min/max zone maps, no index): one table in arrival
// order, the data JSON without the level, module and message it has as columns; rows go in through an
// appender inside an explicit transaction, so a commit of several batches is one WAL flush.
// With `timeBoundedPages`, a newest-first page asks the last hour first and widens the window
// eightfold until it is full (docs/event-store.md), so that the zone maps on ts skip older row groups.
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { HOUR_MS, PROJECT_ID, type Candidate, type EventStore, type LogData, type ReadEvent } from './workload.ts'

const SCHEMA = `
  create table if not exists log_events (
    project_id varchar not null, ts bigint not null, id varchar not null, received_at bigint not null,
    level varchar, module varchar, message varchar not null, rest varchar
  )
`

function toReadEvent(row: unknown[]): ReadEvent {
  const [id, ts, receivedAt, level, module, message, rest] = row as [string, bigint, bigint, string | null, string | null, string, string | null]
  const data: LogData = { message, ...(rest === null ? {} : JSON.parse(rest)) }
  if (level !== null) data.level = level
  if (module !== null) data.module = module
  return { id, ts: Number(ts), receivedAt: Number(receivedAt), data }
}

const COLUMNS = 'id, ts, received_at, level, module, message, rest'

/** The first window a time-bounded page asks, and how much each next one widens. */
const FIRST_WINDOW_MS = HOUR_MS
const WINDOW_GROWTH = 8

export async function openDuckdbEvents(dir: string, { timeBoundedPages }: { timeBoundedPages: boolean }): Promise<EventStore> {
  // One thread: in the portal the store shares two cores with the HTTP path, and on a shared machine
  // a second thread made reads slower and noisier, not faster (5–36 ms against 3–5 ms at 32k rows).
  const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'), { threads: '1' })
  const connection = await instance.connect()
  await connection.run(SCHEMA)
  const appender = await connection.createAppender('log_events')
  const project = PROJECT_ID
  const read = async (sql: string, values: (string | bigint | number)[]) => (await connection.runAndReadAll(sql, values)).getRows()

  /** Newest first: `limit` events matching `where` (over $1…$n = `values`) in [from, to), whole or window by window. */
  async function page(where: string, values: (string | bigint)[], from: number, to: number, limit: number): Promise<ReadEvent[]> {
    const n = values.length
    const sql = `select ${COLUMNS} from log_events where ${where} and ts >= $${n + 1} and ts < $${n + 2} order by ts desc, id desc limit $${n + 3}`
    if (!timeBoundedPages) return (await read(sql, [...values, BigInt(from), BigInt(to), limit])).map(toReadEvent)
    const found: ReadEvent[] = []
    for (let end = to, span = FIRST_WINDOW_MS; end > from && found.length < limit; end -= span, span *= WINDOW_GROWTH) {
      const start = Math.max(from, end - span)
      found.push(...(await read(sql, [...values, BigInt(start), BigInt(end), limit - found.length])).map(toReadEvent))
      if (start === from) break
    }
    return found
  }

  return {
    async append(events) {
      await connection.run('begin transaction')
      try {
        for (const e of events) {
          const { level, module, message, ...rest } = e.data
          appender.appendVarchar(project)
          appender.appendBigInt(BigInt(e.ts))
          appender.appendVarchar(e.id)
          appender.appendBigInt(BigInt(e.receivedAt))
          if (level === undefined) appender.appendNull()
          else appender.appendVarchar(level)
          if (module === undefined) appender.appendNull()
          else appender.appendVarchar(module)
          appender.appendVarchar(message)
          if (Object.keys(rest).length === 0) appender.appendNull()
          else appender.appendVarchar(JSON.stringify(rest))
          appender.endRow()
        }
        appender.flushSync()
        await connection.run('commit')
      } catch (error) {
        await connection.run('rollback')
        throw error
      }
    },
    async newest(module, level, limit) {
      const [[first, last]] = await read('select min(ts), max(ts) from log_events where project_id = $1', [project])
      if (first === null) return []
      return page('project_id = $1 and module = $2 and level = $3', [project, module, level], Number(first), Number(last) + 1, limit)
    },
    search: (text, from, to, limit) => page('project_id = $1 and contains(lower(message), $2)', [project, text.toLowerCase()], from, to, limit),
    async countLevels(from, to) {
      const rows = await read('select level, count(*) from log_events where project_id = $1 and ts >= $2 and ts < $3 group by level', [project, BigInt(from), BigInt(to)])
      return new Map(rows.map(([level, count]) => [level as string | null, Number(count)]))
    },
    async close() {
      appender.closeSync()
      connection.closeSync()
      instance.closeSync()
    },
  }
}

export const duckdb: Candidate = {
  name: 'duckdb',
  layout: 'one columnar table in arrival order (zone maps, no index), data JSON minus columns, appender; pages scan',
  open: (dir) => openDuckdbEvents(dir, { timeBoundedPages: false }),
}
