import { sql, type SelectQueryBuilder } from 'kysely'
import type { PortalContext } from '../../context.ts'
import { eventsDb, moduleDb } from '../../modules/read-route.ts'
import type { LogTables } from '../../modules/logs/tables.ts'
import { HOUR_MS } from '../../modules/logs/level-counts.ts'
import type { LogSelection, Matcher } from './logql.ts'
import { streamTest, type Labels, type LogEntry } from './pipeline.ts'

/**
 * The labels a log's stream has: its level and module (the logs module's promoted fields, in columns) and the
 * service that sent it (`serviceName`, as OpenTelemetry and Sentry logs carry it), each when the log has one.
 */
export const STREAM_LABELS = ['level', 'module', 'service_name'] as const
type StreamLabel = (typeof STREAM_LABELS)[number]

/** Rows read at a time: the first batch is what the caller expects to need, each next one four times larger up to this. */
const SCAN_BATCH = 5_000

type LogQuery = SelectQueryBuilder<any, any, any>

function events(ctx: PortalContext) {
  return eventsDb<LogTables>(ctx, 'log_events')
}

/** The SQL expression of a stream label: a column, or the payload's `serviceName`. */
function labelColumn(ctx: PortalContext, label: StreamLabel) {
  return label === 'service_name' ? ctx.storage.eventsOf('log_events').jsonPathText('data', ['serviceName']) : sql<string | null>`${sql.ref(label)}`
}

function isStreamLabel(name: string): name is StreamLabel {
  return (STREAM_LABELS as readonly string[]).includes(name)
}

/** A matcher the database can apply exactly: equality to a non-empty value, or its negation, on a stream label. */
function exactInSql(matcher: Matcher): boolean {
  return isStreamLabel(matcher.name) && (matcher.op === '=' || matcher.op === '!=') && matcher.value !== ''
}

/** Whether `where` narrows to exactly the selection's logs, so that counts can be made in the database. */
export function selectionIsExactInSql(selection: LogSelection): boolean {
  return selection.stages.length === 0 && selection.matchers.every(exactInSql)
}

/**
 * Narrows a query of log rows by what the database can apply: the selector's exact matchers, and each `|=`
 * before any line_format as a case-insensitive substring (a superset, which the pipeline then checks exactly).
 */
function where(ctx: PortalContext, query: LogQuery, selection: LogSelection): LogQuery {
  let narrowed = query
  for (const matcher of selection.matchers.filter(exactInSql)) {
    const column = labelColumn(ctx, matcher.name as StreamLabel)
    narrowed = matcher.op === '=' ? narrowed.where(column, '=', matcher.value) : narrowed.where((eb) => eb.or([eb(column, 'is', null), eb(column, '<>', matcher.value)]))
  }
  for (const stage of selection.stages) {
    if (stage.kind === 'lineFormat') break
    if (stage.kind === 'line' && stage.op === '|=' && stage.value !== '') narrowed = narrowed.where(ctx.storage.eventsOf('log_events').containsText('message', stage.value))
  }
  return narrowed
}

function streamOf(row: Record<string, unknown>): Labels {
  const labels: Labels = {}
  for (const label of STREAM_LABELS) {
    const value = row[label]
    if (value !== null && value !== undefined && value !== '') labels[label] = String(value)
  }
  return labels
}

export interface ScanRange {
  /** first millisecond included */
  fromMs: number
  /** first millisecond excluded */
  toMs: number
}

/** The first time window a scan reads, as a share of its range; each next window is four times wider. */
const FIRST_WINDOW_SHARE = 1 / 64
const WINDOW_GROWTH = 4

/**
 * The project's logs in the range that the selector matches, newest first (`backward`) or oldest first, in
 * batches read after one another by (ts, id); `metadata` reads each log's `fields` too. Stops when `take` says so.
 *
 * The range is read in time windows from its newest end (its oldest, forward), each four times wider than the
 * last, so that the newest 50 of a week are found among its last hours: a columnar store reads every row of the
 * range a filter is tested on, and a query whose answer lies in its first window then never reads the rest
 * (`{level=~".+"} |= "refund"` over 24 h of 1M logs: 34.6 → 6.6 ms, `npm run bench -- query-apis`). A row store's
 * index walk stops at the limit either way; the windows cost it a query or two more.
 */
export async function scanLogs(
  ctx: PortalContext,
  projectId: string,
  selection: LogSelection,
  range: ScanRange,
  direction: 'backward' | 'forward',
  metadata: boolean,
  take: (entries: LogEntry[]) => boolean,
  firstBatch = SCAN_BATCH,
): Promise<{ linesScanned: number; bytesScanned: number }> {
  const store = ctx.storage.eventsOf('log_events')
  const matches = streamTest(selection.matchers)
  const backward = direction === 'backward'
  const order = backward ? 'desc' : 'asc'
  const stats = { linesScanned: 0, bytesScanned: 0 }
  const fromMs = Math.ceil(range.fromMs)
  const toMs = Math.ceil(range.toMs)
  let windowMs = Math.max(1, Math.ceil((toMs - fromMs) * FIRST_WINDOW_SHARE))
  // the window being read: [windowFrom, windowTo)
  let windowFrom = backward ? Math.max(fromMs, toMs - windowMs) : fromMs
  let windowTo = backward ? toMs : Math.min(toMs, fromMs + windowMs)
  let after: { ts: number; id: string } | undefined
  let batch = Math.max(1, Math.min(firstBatch, SCAN_BATCH))
  for (;;) {
    // The payload whole rather than its service extracted: a columnar store computes what is selected for every
    // row that passes the filter before it keeps the newest few (DuckDB, 50 of 10,000 errors: 40 → 15–19 ms, `npm run bench -- query-apis` at scale 0.1).
    let query: LogQuery = events(ctx)
      .selectFrom('log_events')
      .select(['id', 'ts', 'data', ...new Set(['level', 'module', 'message', ...store.dataColumns])] as never[])
      .where('project_id', '=', projectId)
      .where('ts', '>=', windowFrom)
      .where('ts', '<', windowTo)
    query = where(ctx, query, selection)
    if (after) {
      const comparison = backward ? sql.raw('<') : sql.raw('>')
      query = query.where(sql<boolean>`(${sql.ref('ts')}, ${sql.ref('id')}) ${comparison} (${after.ts}, ${after.id})`)
    }
    const rows: Record<string, unknown>[] = await query.orderBy('ts', order).orderBy('id', order).limit(batch).execute()
    const entries: LogEntry[] = []
    for (const row of rows) {
      const data = store.dataOf(row)
      const stream = streamOf({ ...row, service_name: data.serviceName })
      const line = String(row.message)
      stats.linesScanned++
      stats.bytesScanned += Buffer.byteLength(line)
      if (!matches(stream)) continue
      const fields = metadata ? data.fields : undefined
      entries.push({ id: String(row.id), ts: Number(row.ts), line, stream, metadata: typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>) : undefined })
    }
    if (rows.length > 0) {
      const last = rows[rows.length - 1]
      after = { ts: Number(last.ts), id: String(last.id) }
      if (!take(entries)) return stats
    }
    if (rows.length === batch) {
      batch = Math.min(batch * 4, SCAN_BATCH)
      continue
    }
    // This window is read: the next one, wider, or the end of the range.
    if (backward ? windowFrom <= fromMs : windowTo >= toMs) return stats
    windowMs *= WINDOW_GROWTH
    after = undefined
    if (backward) [windowFrom, windowTo] = [Math.max(fromMs, windowFrom - windowMs), windowFrom]
    else [windowFrom, windowTo] = [windowTo, Math.min(toMs, windowTo + windowMs)]
  }
}

/** Counts of the selection's logs per stream and bucket, made by the database; `bucketOf` numbers (origin + j·b, origin + (j+1)·b]. */
export async function countInBuckets(
  ctx: PortalContext,
  projectId: string,
  selection: LogSelection,
  range: ScanRange,
  originMs: number,
  bucketMs: number,
): Promise<{ stream: Labels; bucket: number; count: number }[]> {
  // ts − origin − 1 ≥ 0 over the range; (v − v % b) / b is whole in every store (DuckDB's `/` divides as floats).
  const shifted = sql`(${sql.ref('ts')} - ${sql.lit(Math.floor(originMs) + 1)})`
  const bucket = sql<number>`cast((${shifted} - ${shifted} % ${sql.lit(bucketMs)}) / ${sql.lit(bucketMs)} as bigint)`
  const serviceName = labelColumn(ctx, 'service_name')
  let query: LogQuery = events(ctx)
    .selectFrom('log_events')
    .select((eb) => [bucket.as('bucket'), 'level', 'module', serviceName.as('service_name'), eb.fn.countAll().as('count')])
    .where('project_id', '=', projectId)
    .where('ts', '>=', Math.ceil(range.fromMs))
    .where('ts', '<', Math.ceil(range.toMs))
  // by the output names: the JSON path's parameter would make the select's and the grouping's expressions differ
  query = where(ctx, query, selection).groupBy([sql.ref('bucket'), 'level', 'module', sql.ref('service_name')])
  const rows: Record<string, unknown>[] = await query.execute()
  return rows.map((row) => ({ stream: streamOf(row), bucket: Number(row.bucket), count: Number(row.count) }))
}

/** Whether the selection reads only `level` and no stage: the hourly level counts answer it (src/modules/logs/level-counts.ts). */
export function hourlyCountsAnswer(selection: LogSelection): boolean {
  return selection.stages.length === 0 && selection.matchers.every((matcher) => matcher.name === 'level')
}

/**
 * Counts per level and bucket of `bucketMs` (whole hours, origin on an hour) from the hourly counts. An hour's
 * count covers [h, h + 1 h) and a bucket (h, h + 1 h]: the logs stamped exactly on the hours are moved over,
 * read from the logs themselves through the (project, ts) index.
 */
export async function countInHourBuckets(
  ctx: PortalContext,
  projectId: string,
  selection: LogSelection,
  range: ScanRange,
  originMs: number,
  bucketMs: number,
): Promise<{ stream: Labels; bucket: number; count: number }[]> {
  const matches = streamTest(selection.matchers)
  const firstHour = Math.ceil(range.fromMs / HOUR_MS) * HOUR_MS
  const hours = await moduleDb<LogTables>(ctx)
    .selectFrom('log_level_hours')
    .select((eb) => ['hour', 'level', eb.fn.sum('events').as('count')])
    .where('project_id', '=', projectId)
    .where('hour', '>=', firstHour - HOUR_MS)
    .where('hour', '<', range.toMs)
    .groupBy(['hour', 'level'])
    .execute()
  const boundaries: number[] = []
  for (let hour = firstHour - HOUR_MS; hour <= range.toMs; hour += HOUR_MS) boundaries.push(hour)
  const onTheHour = await events(ctx)
    .selectFrom('log_events')
    .select((eb) => ['ts', 'level', eb.fn.countAll().as('count')])
    .where('project_id', '=', projectId)
    .where('ts', 'in', boundaries)
    .groupBy(['ts', 'level'])
    .execute()
  const counts = new Map<string, { stream: Labels; bucket: number; count: number }>()
  const add = (level: string | null, at: number, count: number) => {
    // (origin + j·b, origin + (j+1)·b] holds every ms `at` with j = floor((at − origin − 1) / b)
    const bucket = Math.floor((at - originMs - 1) / bucketMs)
    const stream = streamOf({ level })
    if (!matches(stream)) return
    const key = `${bucket} ${JSON.stringify(level)}`
    const entry = counts.get(key) ?? { stream, bucket, count: 0 }
    entry.count += count
    counts.set(key, entry)
  }
  // an hour's logs [h, h + 1 h) sit in the bucket of (h, h + 1 h] but for those stamped at h itself
  for (const row of hours) add(row.level, Number(row.hour) + HOUR_MS, Number(row.count))
  for (const row of onTheHour) {
    add(row.level, Number(row.ts) + HOUR_MS, -Number(row.count))
    add(row.level, Number(row.ts), Number(row.count))
  }
  return [...counts.values()].filter((entry) => entry.count !== 0)
}

/** The stream labels that some log of the range carries. */
export async function labelNames(ctx: PortalContext, projectId: string, range: ScanRange): Promise<string[]> {
  const present = await Promise.all(
    STREAM_LABELS.map(async (label) => {
      const row = await events(ctx)
        .selectFrom('log_events')
        .select('id')
        .where('project_id', '=', projectId)
        .where('ts', '>=', Math.ceil(range.fromMs))
        .where('ts', '<', Math.ceil(range.toMs))
        .where(labelColumn(ctx, label), 'is not', null)
        .limit(1)
        .executeTakeFirst()
      return row ? label : undefined
    }),
  )
  return present.filter((label): label is StreamLabel => label !== undefined).sort()
}

/** The distinct label sets (streams) of the range that the matchers select. */
export async function streams(ctx: PortalContext, projectId: string, matchers: Matcher[], range: ScanRange): Promise<Labels[]> {
  const serviceName = labelColumn(ctx, 'service_name')
  let query: LogQuery = events(ctx)
    .selectFrom('log_events')
    .select(['level', 'module', serviceName.as('service_name')])
    .where('project_id', '=', projectId)
    .where('ts', '>=', Math.ceil(range.fromMs))
    .where('ts', '<', Math.ceil(range.toMs))
  query = where(ctx, query, { matchers, stages: [] }).groupBy(['level', 'module', sql.ref('service_name')])
  const matches = streamTest(matchers)
  const rows: Record<string, unknown>[] = await query.execute()
  return rows.map(streamOf).filter(matches)
}

/** Lines, bytes (characters of the message) and streams of the range that the matchers select, for Grafana's query size hint. */
export async function indexStats(ctx: PortalContext, projectId: string, matchers: Matcher[], range: ScanRange) {
  const serviceName = labelColumn(ctx, 'service_name')
  let query: LogQuery = events(ctx)
    .selectFrom('log_events')
    .select((eb) => ['level', 'module', serviceName.as('service_name'), eb.fn.countAll().as('entries'), eb.fn.sum(sql`length(${sql.ref('message')})`).as('bytes')])
    .where('project_id', '=', projectId)
    .where('ts', '>=', Math.ceil(range.fromMs))
    .where('ts', '<', Math.ceil(range.toMs))
  query = where(ctx, query, { matchers, stages: [] }).groupBy(['level', 'module', sql.ref('service_name')])
  const matches = streamTest(matchers)
  const rows = ((await query.execute()) as Record<string, unknown>[]).filter((row) => matches(streamOf(row)))
  return {
    streams: rows.length,
    chunks: 0,
    entries: rows.reduce((sum, row) => sum + Number(row.entries), 0),
    bytes: rows.reduce((sum, row) => sum + Number(row.bytes ?? 0), 0),
  }
}
