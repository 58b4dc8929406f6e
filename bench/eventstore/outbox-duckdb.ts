// (d) The two-store design: each commit writes its events to SQLite as one compressed block (an outbox
// row, with the hourly level counts: state stays in SQLite) and is durable there; every
// MATERIALISE_EVENTS events, the outbox's blocks are appended to DuckDB in one transaction and then
// deleted from SQLite. Reads as docs/event-store.md designs them: pages from DuckDB, time-bounded;
// counts per level from the hourly counts in SQLite, the partial hours from DuckDB.
import path from 'node:path'
import SQLite from '../../src/storage/sqlite/better-sqlite3.ts'
import { openDuckdbEvents } from './duckdb.ts'
import { sqliteBlocks } from './sqlite-blocks.ts'
import { PROJECT_ID, countLevelsByHours, type BenchEvent, type Candidate } from './workload.ts'

/** DuckDB's commit cost is per transaction as much as per row: the materialiser groups ten portal commits. */
const MATERIALISE_EVENTS = 16_000

export const outboxDuckdb: Candidate = {
  name: 'outbox + duckdb',
  layout: `sqlite blocks as a durable outbox, appended to duckdb every ${MATERIALISE_EVENTS.toLocaleString('en')} events, then deleted; time-bounded pages; hourly counts`,
  async open(dir) {
    const outbox = await sqliteBlocks.open(dir)
    const outboxRows = new SQLite(path.join(dir, 'events.db'))
    const deleteMaterialised = outboxRows.prepare('delete from log_blocks')
    const countHours = outboxRows.prepare('select level, sum(events) as count from log_level_hours where project_id = ? and hour >= ? and hour < ? group by level')
    const events = await openDuckdbEvents(dir, { timeBoundedPages: true })
    let pending: BenchEvent[] = []
    const materialise = async () => {
      if (pending.length === 0) return
      await events.append(pending)
      deleteMaterialised.run()
      pending = []
    }
    return {
      async append(batch) {
        await outbox.append(batch)
        pending.push(...batch)
        if (pending.length >= MATERIALISE_EVENTS) await materialise()
      },
      newest: (module, level, limit) => events.newest(module, level, limit),
      search: (text, from, to, limit) => events.search(text, from, to, limit),
      countLevels: (from, to) =>
        countLevelsByHours(
          from,
          to,
          (fromHour, toHour) => countHours.all(PROJECT_ID, fromHour, toHour) as any[],
          async (fromMs, toMs) => [...(await events.countLevels(fromMs, toMs))].map(([level, count]) => ({ level, count })),
        ),
      async close() {
        await materialise()
        outboxRows.close()
        await outbox.close()
        await events.close()
      },
    }
  },
}
