import { createHash } from 'node:crypto'
import type { WriteContext } from '../context.ts'
import type { Storage } from '../storage/storage.ts'
import type { Breadcrumb } from './occurrence-context.ts'
import { occurrenceContext } from './occurrence-context.ts'
import type { Occurrence } from './group-store.ts'
import type { Frame } from './stack-trace.ts'
import type { ErrorDb, ErrorTables } from './tables.ts'

/** Span locks are hashed into this many names: the lock table stays small, and two spans rarely share one. */
const SPAN_LOCK_SLOTS = 1024
const DAY_MS = 86_400_000
/** The stored first reports a batch looks at, at most: a span has one or two, unless an SDK reports many errors in one. */
const MAX_FIRST_REPORTS = 500
const OTHER_REPORTER: Record<string, string> = { sentry: 'opentelemetry', opentelemetry: 'sentry' }

/** The stored (or, in the same batch, earlier) report of an exception that a second report merges into. */
export type FirstReport = Pick<Occurrence, 'id' | 'projectId' | 'ts' | 'name' | 'message' | 'stack' | 'frames' | 'release' | 'environment' | 'service' | 'request' | 'metadata' | 'breadcrumbs'> & {
  fingerprint: string
  reportedBy: string[]
}

interface Link {
  traceId: string
  spanId: string
  reporter: string
}

/**
 * The occurrences of `occurrences` that are a second report of one already stored (or earlier in the
 * batch): the same exception in the same trace and span, from the other receiver (a Sentry SDK and
 * OpenTelemetry both report what one failure threw). Each maps to its first report. Span locks make
 * two reports racing on two connections find each other, whichever commits first; the lookup reads
 * committed rows, so a restart between the two changes nothing.
 */
export async function findSecondReports(trx: ErrorDb, ctx: WriteContext, occurrences: Occurrence[]): Promise<Map<Occurrence, FirstReport>> {
  const linked = occurrences.map((occurrence) => ({ occurrence, link: linkOf(occurrence.metadata) })).filter((item): item is { occurrence: Occurrence; link: Link } => item.link !== undefined)
  const seconds = new Map<Occurrence, FirstReport>()
  if (linked.length === 0) return seconds
  await ctx.storage.lockInTransaction(trx, [...new Set(linked.map(({ occurrence, link }) => spanLock(occurrence.projectId, link)))])
  const rows = await trx
    .selectFrom('error_occurrences')
    .selectAll()
    .where('project_id', 'in', [...new Set(linked.map(({ occurrence }) => occurrence.projectId))])
    .where('trace_id', 'in', [...new Set(linked.map(({ link }) => link.traceId))])
    .where('span_id', 'in', [...new Set(linked.map(({ link }) => link.spanId))])
    // Only a report from the other receiver, not yet merged, can take this one: a span that many errors of one SDK share
    // (a long job's) would otherwise be read whole for every capture, and captures slow with each one stored.
    .where('reported_by', 'in', [...new Set(linked.map(({ link }) => OTHER_REPORTER[link.reporter]))])
    // No order: sorted by time, SQLite walks the project's occurrences by time rather than its trace index (9.5 ms a batch).
    .limit(MAX_FIRST_REPORTS)
    .execute()
  const candidates = rows.map((row) => ({ link: { traceId: row.trace_id!, spanId: row.span_id! }, report: reportOfRow(ctx.storage, row) }))
  for (const { occurrence, link } of linked) {
    const first = candidates.find(
      ({ link: other, report }) =>
        report.projectId === occurrence.projectId &&
        other.traceId === link.traceId &&
        other.spanId === link.spanId &&
        !report.reportedBy.includes(link.reporter) &&
        sameException(report, occurrence),
    )
    if (first) {
      seconds.set(occurrence, first.report)
      first.report.reportedBy.push(link.reporter)
      continue
    }
    // The first report of its span in this batch: a later one of the other receiver merges into it.
    candidates.push({ link, report: reportOfOccurrence(occurrence, link.reporter) })
  }
  return seconds
}

/**
 * Merges each second report into its first: the stored occurrence takes what it lacked (release,
 * environment, service, request, breadcrumbs, the Sentry copy's frames, tags and user), the Sentry
 * copy winning where both have a value; it stays in its group and counts once. Tags it newly names
 * are counted through an `enriches` delta. `groupOf` gives each fingerprint's group, read under its lock.
 */
export async function mergeSecondReports(trx: ErrorDb, storage: Storage, seconds: Map<Occurrence, FirstReport>, groupOf: (fingerprint: string) => string, appendDeltas: (rows: ErrorTables['error_count_deltas'][]) => Promise<void>) {
  const deltas: ErrorTables['error_count_deltas'][] = []
  for (const [second, first] of seconds) {
    const secondReport = reportOfOccurrence(second, linkOf(second.metadata)!.reporter)
    const [rich, poor] = secondReport.reportedBy.includes('sentry') ? [secondReport, first] : [first, secondReport]
    const merged = {
      name: rich.name || poor.name,
      message: rich.message || poor.message,
      stack: rich.stack ?? poor.stack,
      frames: rich.frames ?? poor.frames,
      release: rich.release ?? poor.release,
      environment: rich.environment ?? poor.environment,
      service: rich.service ?? poor.service,
      request: rich.request ?? poor.request,
      metadata: { ...poor.metadata, ...rich.metadata },
      breadcrumbs: rich.breadcrumbs ?? poor.breadcrumbs,
    }
    const reportedBy = [...new Set([...first.reportedBy, ...secondReport.reportedBy])].sort()
    await trx
      .updateTable('error_occurrences')
      .set({
        ...merged,
        frames: merged.frames === null ? null : JSON.stringify(merged.frames),
        request: merged.request === null ? null : JSON.stringify(merged.request),
        metadata: JSON.stringify(merged.metadata),
        breadcrumbs: merged.breadcrumbs === null ? null : JSON.stringify(merged.breadcrumbs),
        reported_by: reportedBy.join(','),
      })
      .where('id', '=', first.id)
      .execute()
    const delta = enrichment(first, merged, second, groupOf(first.fingerprint))
    if (delta) deltas.push(delta)
  }
  if (deltas.length > 0) await appendDeltas(deltas)
}

/** What the merged occurrence names that its first report did not, as a delta that counts tags only; undefined when nothing is new. */
function enrichment(first: FirstReport, merged: Pick<FirstReport, 'release' | 'environment' | 'service' | 'metadata'>, second: Occurrence, groupId: string): ErrorTables['error_count_deltas'] | undefined {
  const had = occurrenceContext(first.metadata).tags
  const has = occurrenceContext(merged.metadata).tags
  const tags = Object.fromEntries(Object.entries(has).filter(([key]) => had[key] === undefined).sort(([a], [b]) => (a < b ? -1 : 1)))
  const newly = (key: 'release' | 'environment' | 'service') => (first[key] === null ? merged[key] : null)
  const release = newly('release')
  const environment = newly('environment')
  const service = newly('service')
  if (release === null && environment === null && service === null && Object.keys(tags).length === 0) return undefined
  return {
    project_id: first.projectId,
    group_id: groupId,
    fingerprint: first.fingerprint,
    day: Math.floor(first.ts / DAY_MS),
    environment,
    release,
    service,
    count: 1,
    first_seen: first.ts,
    last_seen: first.ts,
    name: second.name,
    message: second.message,
    tags: Object.keys(tags).length > 0 ? JSON.stringify(tags) : null,
    enriches: 1,
  }
}

/** Two reports name the same exception: the same type (`java.lang.IllegalStateException` is `IllegalStateException`), else, untyped, the same message. */
function sameException(a: Pick<FirstReport, 'name' | 'message'>, b: Pick<FirstReport, 'name' | 'message'>): boolean {
  if (a.name === '' || b.name === '') return a.message === b.message
  return a.name === b.name || a.name.endsWith(`.${b.name}`) || b.name.endsWith(`.${a.name}`)
}

function linkOf(metadata: Record<string, unknown>): Link | undefined {
  const { traceId, spanId, reportedBy } = metadata
  if (reportedBy !== 'sentry' && reportedBy !== 'opentelemetry') return undefined
  if (typeof traceId !== 'string' || traceId === '' || traceId.length > 128) return undefined
  if (typeof spanId !== 'string' || spanId === '' || spanId.length > 64) return undefined
  return { traceId, spanId, reporter: reportedBy }
}

function spanLock(projectId: string, link: Link): string {
  const slot = createHash('sha256').update(`${projectId}\u0000${link.traceId}\u0000${link.spanId}`).digest().readUInt32BE(0) % SPAN_LOCK_SLOTS
  return `error-span:${slot}`
}

function reportOfRow(storage: Storage, row: ErrorTables['error_occurrences']): FirstReport {
  const json = <T>(value: unknown) => (value === null ? null : storage.parseJson<T>(value))
  return {
    id: row.id,
    projectId: row.project_id,
    fingerprint: row.fingerprint,
    ts: row.ts,
    name: row.name,
    message: row.message,
    stack: row.stack,
    frames: json<Frame[]>(row.frames),
    release: row.release,
    environment: row.environment,
    service: row.service,
    request: json<Record<string, unknown>>(row.request),
    metadata: storage.parseJson<Record<string, unknown>>(row.metadata),
    breadcrumbs: json<Breadcrumb[]>(row.breadcrumbs),
    reportedBy: (row.reported_by ?? '').split(',').filter((reporter) => reporter !== ''),
  }
}

function reportOfOccurrence(occurrence: Occurrence, reporter: string): FirstReport {
  return {
    id: occurrence.id,
    projectId: occurrence.projectId,
    fingerprint: occurrence.grouping.fingerprint,
    ts: occurrence.ts,
    name: occurrence.name,
    message: occurrence.message,
    stack: occurrence.stack,
    frames: occurrence.frames,
    release: occurrence.release,
    environment: occurrence.environment,
    service: occurrence.service,
    request: occurrence.request,
    metadata: occurrence.metadata,
    breadcrumbs: occurrence.breadcrumbs,
    reportedBy: [reporter],
  }
}
