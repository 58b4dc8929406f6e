// Retention soak: 14 simulated days of log events (time-shifted: each day's events are dated that day and
// the retention pass runs as of that day's end), RETENTION_DAYS=7; prints the database's bytes on disk
// after each day, which must stop growing after day 7. Then ingest over loopback HTTP (100-event signed
// batches, 4 connections) for a fixed time before, during and after a purge that deletes a week of events.
// BENCH_RETENTION_EVENTS_PER_DAY (default 100,000) and BENCH_RETENTION_SECONDS (default 10) set the sizes;
// TEST_DATABASES=sqlite (or postgres) narrows the databases.
import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import { newEventId } from '../src/ids.ts'
import type { PortalContext } from '../src/context.ts'
import { moduleByType } from '../src/modules/registry.ts'
import { writeEvents, type AcceptedEvent } from '../src/modules/write-events.ts'
import { createProject, DIALECTS, ingest, startTestPortal, type Dialect, type TestPortal, type TestProject } from '../test/support/portal.ts'

const EVENTS_PER_DAY = Number(process.env.BENCH_RETENTION_EVENTS_PER_DAY ?? 100_000)
const INGEST_SECONDS = Number(process.env.BENCH_RETENTION_SECONDS ?? 10)
const SOAK_DAYS = 14
const RETENTION_DAYS = 7
const DAY_MS = 86_400_000
const ROWS_PER_TRANSACTION = 5_000
const CONNECTIONS = 4
const BATCH = 100
const logModule = moduleByType.get('log')!

function logEvent(projectId: string, ts: number, i: number): AcceptedEvent {
  const data = { level: ['info', 'info', 'warn', 'error'][i % 4], message: `order ${i % 9973} created for user ${i % 1000}`, module: `module-${i % 20}`, fields: { requestId: `req-${i}` } }
  return { module: logModule, event: { id: newEventId(ts), projectId, ts, receivedAt: ts, data }, dataJson: JSON.stringify(data) }
}

/** Writes a simulated day's events, dated through that day, as ingest writes them. */
async function seedDay(ctx: PortalContext, projectId: string, dayStart: number): Promise<void> {
  const db = ctx.storage.db
  for (let first = 0; first < EVENTS_PER_DAY; first += ROWS_PER_TRANSACTION) {
    const events: AcceptedEvent[] = []
    for (let i = first; i < Math.min(EVENTS_PER_DAY, first + ROWS_PER_TRANSACTION); i++) events.push(logEvent(projectId, dayStart + Math.floor((i / EVENTS_PER_DAY) * DAY_MS), i))
    await db.transaction().execute((trx) => writeEvents(trx, ctx, events))
  }
}

/** The database's bytes on disk: the SQLite data folder's files (portal.db and events.duckdb with their WALs), or the PostgreSQL database. */
async function diskBytes(t: TestPortal): Promise<number> {
  if (t.dialect === 'postgres') return Number((await sql<{ bytes: string }>`select pg_database_size(current_database()) as bytes`.execute(t.portal.ctx.storage.db)).rows[0].bytes)
  const files = fs.readdirSync(t.config.dataDir).map((name) => path.join(t.config.dataDir, name))
  return files.reduce((sum, file) => sum + (fs.statSync(file).isFile() ? fs.statSync(file).size : 0), 0)
}

/** Events per second accepted by `CONNECTIONS` clients sending signed batches for `INGEST_SECONDS`. */
async function ingestRate(t: TestPortal, project: TestProject, ts: string): Promise<number> {
  const until = performance.now() + INGEST_SECONDS * 1000
  let accepted = 0
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const res = await ingest(t, project, Array.from({ length: BATCH }, (_, i) => ({ type: 'log', ts, data: { level: 'info', message: `live ${i}` } })))
        if (res.status !== 200) throw new Error(`ingest: ${res.status} ${res.text}`)
        accepted += BATCH
      }
    }),
  )
  return accepted / INGEST_SECONDS
}

async function benchDialect(dialect: Dialect): Promise<void> {
  const t = await startTestPortal(dialect, { LOG_LEVEL: 'warn', RETENTION_DAYS: String(RETENTION_DAYS), INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000' }, { checkResponses: false })
  try {
    const project = await createProject(t, 'soak')
    // Simulated days run forward from today, so that PostgreSQL's partitions are made ahead of them as in service.
    const firstDay = Math.floor(Date.now() / DAY_MS) * DAY_MS
    for (let day = 0; day < SOAK_DAYS; day++) {
      const dayStart = firstDay + day * DAY_MS
      await seedDay(t.portal.ctx, project.id, dayStart)
      const started = performance.now()
      const report = await t.portal.retention.runNow({ now: dayStart + DAY_MS - 1 })
      const purgeMs = performance.now() - started
      const stored = Number((await sql<{ n: number }>`select count(*) as n from log_events`.execute(t.portal.ctx.storage.eventsOf('log_events').db)).rows[0].n)
      console.log(
        `  ${dialect.padEnd(8)} day ${String(day + 1).padStart(2)}: ${String(stored).padStart(9)} events stored, ${(await diskBytes(t) / 1e6).toFixed(1).padStart(7)} MB on disk; ` +
          `purge ${purgeMs.toFixed(0)} ms: ${report.deleted.log_events ?? 0} rows deleted, ${report.droppedPartitions.length} partitions dropped, ${(report.bytesReturned / 1e6).toFixed(1)} MB returned`,
      )
    }
    // Day 15: live events are dated then; a pass as of a week later expires the seven days still stored.
    const liveDay = firstDay + SOAK_DAYS * DAY_MS
    await t.portal.retention.runNow({ now: liveDay })
    const liveTs = new Date(liveDay + 3_600_000).toISOString()
    // One quiet window before the purge and one after it: their spread is the noise the machine adds, the
    // bound the purge's share has to be read against.
    const before = await ingestRate(t, project, liveTs)
    let purgeMs = 0
    const purgeStarted = performance.now()
    const purge = t.portal.retention.runNow({ now: liveDay + RETENTION_DAYS * DAY_MS }).then((report) => {
      purgeMs = performance.now() - purgeStarted
      return report
    })
    const during = await ingestRate(t, project, liveTs)
    const report = await purge
    const after = await ingestRate(t, project, liveTs)
    const quiet = (before + after) / 2
    const percent = (value: number) => `${value >= quiet ? '+' : ''}${((100 * (value - quiet)) / quiet).toFixed(1)} %`
    console.log(
      `  ${dialect.padEnd(8)} ingest without a purge ${before.toFixed(0)} events/s before, ${after.toFixed(0)} after (noise ${percent(before)} / ${percent(after)}); ` +
        `during one ${during.toFixed(0)} events/s (${percent(during)}); the purge deleted ${report.deleted.log_events ?? 0} rows, dropped ${report.droppedPartitions.length} partitions ` +
        `in ${(purgeMs / 1000).toFixed(1)} s (the ingest window is ${INGEST_SECONDS} s)`,
    )
  } finally {
    await t.close()
  }
}

export async function run() {
  console.log(`${SOAK_DAYS} simulated days of ${EVENTS_PER_DAY} log events, RETENTION_DAYS=${RETENTION_DAYS}; ingest ${INGEST_SECONDS} s, ${CONNECTIONS} connections, ${BATCH}-event batches`)
  for (const dialect of DIALECTS) await benchDialect(dialect)
}
