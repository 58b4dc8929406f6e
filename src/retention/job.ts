import { setImmediate as yieldToIngest } from 'node:timers/promises'
import { sql } from 'kysely'
import type { PortalContext } from '../context.ts'
import { IDEMPOTENCY_RETENTION_MS } from '../ingest/idempotency.ts'
import type { EventModule, ExpiringRows, TablesByName } from '../modules/module.ts'
import { moduleDb } from '../modules/read-route.ts'
import { tablesOf, type Connection } from '../storage/tables.ts'
import { modules } from '../modules/registry.ts'
import { DAY_MS, expiryCutoff, readProjectRetentions, retentionDays } from './policy.ts'
import { countRetentionDeleted, markRetentionRun } from '../metrics/metrics.ts'

/** Day partitions kept ready ahead of today, so that ingest never waits for one to be made. */
const PARTITION_DAYS_AHEAD = 7

const IDEMPOTENCY_RECORDS: ExpiringRows = { table: 'idempotency_keys', timeColumn: 'created_at', key: ['project_id', 'key'] }
/** Alert transitions, kept RETENTION_DAYS_ALERTS days (by default as long as audit events). */
const ALERT_HISTORY: ExpiringRows = { table: 'alert_history', timeColumn: 'at', key: ['id'] }

/** What one run did: the answer to "why did my events go" and "did the disk get its space back". */
export interface RetentionReport {
  /** rows deleted, by table */
  deleted: Record<string, number>
  droppedPartitions: string[]
  createdPartitions: string[]
  bytesReturned: number
  /** modules whose purge failed this pass (a partition's lock not had in time, say), by table: the next pass retries them */
  failed: Record<string, string>
  /** the run ended early because the portal is closing */
  stopped: boolean
}

export interface RetentionOptions {
  now?: number
  stop?: () => boolean
}

/**
 * Deletes the rows of `rows.table` older than `cutoff` (of one project, or of all), `batch` rows a
 * statement: each its own short transaction, with the event loop free between them, so ingest waits
 * for at most one small delete.
 */
export async function deleteExpiredRows(connection: Connection, rows: ExpiringRows, cutoff: number, projectId: string | undefined, batch: number, stop: () => boolean): Promise<number> {
  const db = tablesOf<TablesByName>(connection)
  let deleted = 0
  while (!stop()) {
    let expired = db.selectFrom(rows.table).select(rows.key).where(rows.timeColumn, '<', cutoff)
    if (projectId !== undefined) expired = expired.where('project_id', '=', projectId)
    if (rows.keep) expired = expired.where((eb) => eb.not(rows.keep!(eb)))
    const key = sql.join(rows.key.map((column) => sql.ref(column)))
    const result = await db.deleteFrom(rows.table).where(sql<boolean>`(${key}) in (${expired.limit(batch)})`).executeTakeFirst()
    const count = Number(result.numDeletedRows)
    deleted += count
    if (count < batch) break
    await yieldToIngest()
  }
  return deleted
}

/**
 * One pass of retention over everything that accumulates: each module's events and the rows that
 * expire with them, per project and its settings, then idempotency records after 24 h; whole day
 * partitions are dropped where every project agrees they expired, and the freed space is given back.
 */
export async function applyRetention(ctx: PortalContext, { now = Date.now(), stop = () => false }: RetentionOptions = {}): Promise<RetentionReport> {
  const { storage, config } = ctx
  const db = moduleDb(ctx)
  const batch = config.retention.deleteBatchRows
  const report: RetentionReport = { deleted: {}, droppedPartitions: [], createdPartitions: [], bytesReturned: 0, failed: {}, stopped: false }
  const count = (table: string, rows: number) => {
    report.deleted[table] = (report.deleted[table] ?? 0) + rows
    countRetentionDeleted(table, rows)
  }
  // Deleted projects too: their rows stay after deletion (DESIGN: Projects) and expire like any others.
  const projectIds = (await storage.db.selectFrom('projects').select('id').execute()).map((row) => row.id)
  const settings = await readProjectRetentions(storage.db)

  async function purgeModule(module: EventModule) {
    const cutoffs = projectIds.map((projectId) => [projectId, expiryCutoff(retentionDays(config, module, settings.get(projectId)).days, now)] as const)
    const everyonesCutoff = Math.min(expiryCutoff(config.retention.days[module.type], now), ...cutoffs.map(([, cutoff]) => cutoff))
    report.droppedPartitions.push(...(await storage.space.dropPartitionsBefore(module.table, everyonesCutoff)))
    report.createdPartitions.push(...(await storage.space.createPartitions(module.table, Math.floor(now / DAY_MS) * DAY_MS + (PARTITION_DAYS_AHEAD + 1) * DAY_MS)))
    const tables: ExpiringRows[] = [{ table: module.table, timeColumn: 'ts', key: ['id'] }, ...(module.retention?.expiring ?? [])]
    // The event rows may live in the event store (DuckDB); the rows that expire with them are state, in `db`.
    const events = storage.eventsOf(module.table).db
    for (const [projectId, cutoff] of cutoffs) {
      for (const rows of tables) count(rows.table, await deleteExpiredRows(rows.table === module.table ? events : db, rows, cutoff, projectId, batch, stop))
    }
  }

  for (const module of modules) {
    if (stop()) break
    // One module's failure leaves the others to be purged.
    await purgeModule(module).catch((error: unknown) => (report.failed[module.table] = error instanceof Error ? error.message : String(error)))
  }
  if (!stop()) count(ALERT_HISTORY.table, await deleteExpiredRows(db, ALERT_HISTORY, expiryCutoff(config.retention.alertHistoryDays, now), undefined, batch, stop))
  if (!stop()) count(IDEMPOTENCY_RECORDS.table, await deleteExpiredRows(db, IDEMPOTENCY_RECORDS, now - IDEMPOTENCY_RETENTION_MS + 1, undefined, batch, stop))
  report.bytesReturned = await storage.space.returnFreeSpace(stop)
  report.stopped = stop()
  for (const [table, rows] of Object.entries(report.deleted)) if (rows === 0) delete report.deleted[table]
  return report
}

export interface RetentionJob {
  /** runs a pass now (after the one in progress, if any) */
  runNow(options?: Omit<RetentionOptions, 'stop'>): Promise<RetentionReport>
  stop(): Promise<void>
}

/** Runs `applyRetention` every `RETENTION_INTERVAL_SECONDS`, one pass at a time, the first one interval after start. */
export function startRetentionJob(ctx: PortalContext): RetentionJob {
  let stopped = false
  let running: Promise<unknown> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined

  function runNow(options: Omit<RetentionOptions, 'stop'> = {}): Promise<RetentionReport> {
    const run = running.then(async () => {
      const report = await applyRetention(ctx, { ...options, stop: () => stopped })
      if (!report.stopped) markRetentionRun()
      const changed = Object.keys(report.deleted).length > 0 || report.droppedPartitions.length > 0 || report.bytesReturned > 0
      if (changed) ctx.log.info({ retention: report }, 'retention applied')
      if (Object.keys(report.failed).length > 0) ctx.log.warn({ failed: report.failed }, 'retention could not purge every module; the next pass retries')
      return report
    })
    running = run.catch(() => {})
    return run
  }

  function schedule() {
    timer = setTimeout(() => {
      runNow()
        .catch((error) => ctx.log.warn({ err: error }, 'retention pass failed; the next one retries'))
        .finally(() => stopped || schedule())
    }, ctx.config.retention.intervalSeconds * 1000)
    timer.unref()
  }
  schedule()

  return {
    runNow,
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
