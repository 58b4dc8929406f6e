// (b2) SQLite holding each commit's events as one compressed block: the block's columns (ids, times,
// levels, modules, messages, the rest of the data) as JSON, deflated; a row per block with its project
// and time range, one index on (project, last ts), and the hourly level counts kept at ingest as today.
// Reads walk the blocks newest first and decode only those they need.
import path from 'node:path'
import zlib from 'node:zlib'
import { PROJECT_ID, countLevelsByHours, levelHourRows, newestFirst, type BenchEvent, type Candidate, type LogData, type ReadEvent } from './workload.ts'
import { openPortalSqlite } from './sqlite-today.ts'

const SCHEMA = `
  create table if not exists log_blocks (
    block integer primary key, project_id text not null, first_ts integer not null, last_ts integer not null,
    events integer not null, body blob not null
  );
  create index if not exists log_blocks_project_ts_idx on log_blocks (project_id, last_ts);
  create table if not exists log_level_hours (
    project_id text not null, hour integer not null, level_key text not null, level text, events integer not null,
    primary key (project_id, hour, level_key)
  ) without rowid;
`

interface Block {
  id: string[]
  /** ts minus the block's first_ts */
  ts: number[]
  /** received_at minus ts */
  received: number[]
  level: (string | null)[]
  module: (string | null)[]
  message: string[]
  /** the data without level, module and message, as JSON; null when nothing is left */
  rest: (string | null)[]
}

function encodeBlock(events: BenchEvent[], firstTs: number): Buffer {
  const block: Block = { id: [], ts: [], received: [], level: [], module: [], message: [], rest: [] }
  for (const e of events) {
    const { level, module, message, ...rest } = e.data
    block.id.push(e.id)
    block.ts.push(e.ts - firstTs)
    block.received.push(e.receivedAt - e.ts)
    block.level.push(level ?? null)
    block.module.push(module ?? null)
    block.message.push(message)
    block.rest.push(Object.keys(rest).length === 0 ? null : JSON.stringify(rest))
  }
  return zlib.deflateRawSync(JSON.stringify(block))
}

const decodeBlock = (body: Buffer): Block => JSON.parse(zlib.inflateRawSync(body).toString('utf8'))

function eventAt(block: Block, firstTs: number, i: number): ReadEvent {
  const data: LogData = { message: block.message[i], ...(block.rest[i] === null ? {} : JSON.parse(block.rest[i]!)) }
  if (block.level[i] !== null) data.level = block.level[i]!
  if (block.module[i] !== null) data.module = block.module[i]!
  const ts = firstTs + block.ts[i]
  return { id: block.id[i], ts, receivedAt: ts + block.received[i], data }
}

interface BlockRow {
  first_ts: number
  last_ts: number
  body: Buffer
}

/**
 * The newest `limit` events of the blocks in `rows` (newest last_ts first) that `match` accepts. Blocks may
 * overlap in time (a late batch), so the walk stops only once the next block ends before the limit-th match.
 */
function newestMatches(rows: Iterable<BlockRow>, limit: number, match: (block: Block, i: number, ts: number) => boolean): ReadEvent[] {
  let matches: ReadEvent[] = []
  for (const row of rows) {
    if (matches.length >= limit && row.last_ts < matches[limit - 1].ts) break
    const block = decodeBlock(row.body)
    for (let i = 0; i < block.id.length; i++) {
      if (match(block, i, row.first_ts + block.ts[i])) matches.push(eventAt(block, row.first_ts, i))
    }
    matches = matches.sort(newestFirst).slice(0, limit)
  }
  return matches
}

export const sqliteBlocks: Candidate = {
  name: 'sqlite blocks',
  layout: "a deflated columnar block per commit + (project, last_ts) index + log_level_hours",
  async open(dir) {
    const database = openPortalSqlite(path.join(dir, 'events.db'))
    database.exec(SCHEMA)
    const insertBlock = database.prepare('insert into log_blocks (project_id, first_ts, last_ts, events, body) values (?, ?, ?, ?, ?)')
    const countHour = database.prepare(
      'insert into log_level_hours (project_id, hour, level_key, level, events) values (?, ?, ?, ?, ?) on conflict do update set events = events + excluded.events',
    )
    const write = database.transaction((events: BenchEvent[], firstTs: number, lastTs: number, body: Buffer) => {
      insertBlock.run(PROJECT_ID, firstTs, lastTs, events.length, body)
      for (const row of levelHourRows(events)) countHour.run(PROJECT_ID, row.hour, row.levelKey, row.level, row.events)
    })
    const blocksNewestFirst = database.prepare('select first_ts, last_ts, body from log_blocks where project_id = ? order by last_ts desc')
    const blocksInRange = database.prepare('select first_ts, last_ts, body from log_blocks where project_id = ? and last_ts >= ? and first_ts < ? order by last_ts desc')
    const countHours = database.prepare('select level, sum(events) as count from log_level_hours where project_id = ? and hour >= ? and hour < ? group by level')
    return {
      async append(events) {
        let firstTs = Infinity
        let lastTs = -Infinity
        for (const e of events) {
          firstTs = Math.min(firstTs, e.ts)
          lastTs = Math.max(lastTs, e.ts)
        }
        write(events, firstTs, lastTs, encodeBlock(events, firstTs))
      },
      newest: async (module, level, limit) =>
        newestMatches(blocksNewestFirst.iterate(PROJECT_ID) as Iterable<BlockRow>, limit, (block, i) => block.level[i] === level && block.module[i] === module),
      async search(text, from, to, limit) {
        const needle = text.toLowerCase()
        const rows = blocksInRange.iterate(PROJECT_ID, from, to) as Iterable<BlockRow>
        return newestMatches(rows, limit, (block, i, ts) => ts >= from && ts < to && block.message[i].toLowerCase().includes(needle))
      },
      countLevels: (from, to) =>
        countLevelsByHours(
          from,
          to,
          (fromHour, toHour) => countHours.all(PROJECT_ID, fromHour, toHour) as any[],
          async (fromMs, toMs) => {
            const counts = new Map<string | null, number>()
            for (const row of blocksInRange.iterate(PROJECT_ID, fromMs, toMs) as Iterable<BlockRow>) {
              const block = decodeBlock(row.body)
              for (let i = 0; i < block.id.length; i++) {
                const ts = row.first_ts + block.ts[i]
                if (ts >= fromMs && ts < toMs) counts.set(block.level[i], (counts.get(block.level[i]) ?? 0) + 1)
              }
            }
            return [...counts].map(([level, count]) => ({ level, count }))
          },
        ),
      close: async () => void database.close(),
    }
  },
}
