// (c) DuckDB (columnar, compressed row groups with min/max zone maps, no index): one table in arrival
// order, the data JSON without the level, module and message it has as columns; rows go in through an
// appender inside an explicit transaction, so a commit of several batches is one WAL flush.
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { PROJECT_ID, type Candidate, type LogData, type ReadEvent } from './workload.ts'

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

export const duckdb: Candidate = {
  name: 'duckdb',
  layout: 'one columnar table in arrival order (zone maps, no index), data JSON minus columns, appender',
  async open(dir) {
    // One thread: in the portal the store shares two cores with the HTTP path, and on a shared machine
    // a second thread made reads slower and noisier, not faster (5–36 ms against 3–5 ms at 32k rows).
    const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'), { threads: '1' })
    const connection = await instance.connect()
    await connection.run(SCHEMA)
    const appender = await connection.createAppender('log_events')
    const project = PROJECT_ID
    const read = async (sql: string, values: (string | bigint | number)[]) => (await connection.runAndReadAll(sql, values)).getRows()
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
      newest: async (module, level, limit) =>
        (await read(`select ${COLUMNS} from log_events where project_id = $1 and module = $2 and level = $3 order by ts desc, id desc limit $4`, [project, module, level, limit])).map(
          toReadEvent,
        ),
      search: async (text, from, to, limit) =>
        (
          await read(`select ${COLUMNS} from log_events where project_id = $1 and ts >= $2 and ts < $3 and contains(lower(message), $4) order by ts desc, id desc limit $5`, [
            project,
            BigInt(from),
            BigInt(to),
            text.toLowerCase(),
            limit,
          ])
        ).map(toReadEvent),
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
  },
}
