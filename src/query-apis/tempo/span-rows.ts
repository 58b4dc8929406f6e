import { sql, type Expression, type SqlBool } from 'kysely'
import type { PortalContext } from '../../context.ts'
import { eventsDb } from '../../modules/read-route.ts'
import type { TraceTables } from '../../modules/traces/tables.ts'
import type { Condition, Field, FieldOp, Literal, TraceQuery } from './traceql.ts'
import { TraceqlError } from './traceql.ts'

/** A stored span as a query reads it. */
export interface SpanRow {
  id: string
  ts: number
  traceId: string
  spanId: string
  parentSpanId: string | null
  serviceName: string | null
  name: string | null
  durationMs: number | null
  data: Record<string, unknown>
}

/** A trace's extent and root span, for search results and trace-level conditions. */
export interface TraceSummary {
  traceId: string
  startMs: number
  endMs: number
  rootServiceName: string | null
  rootName: string | null
}

/** The most spans one search looks through when the database cannot apply all of its conditions. */
export const SCAN_WINDOW = 20_000

function store(ctx: PortalContext) {
  return ctx.storage.eventsOf('trace_events')
}

function spans(ctx: PortalContext) {
  return eventsDb<TraceTables>(ctx, 'trace_events')
}

function spanOf(ctx: PortalContext, row: Record<string, unknown>): SpanRow {
  return {
    id: String(row.id),
    ts: Number(row.ts),
    traceId: String(row.trace_id),
    spanId: String(row.span_id),
    parentSpanId: (row.parent_span_id as string | null) ?? null,
    serviceName: (row.service_name as string | null) ?? null,
    name: (row.name as string | null) ?? null,
    durationMs: row.duration_ms === null || row.duration_ms === undefined ? null : Number(row.duration_ms),
    data: store(ctx).dataOf(row),
  }
}

const SPAN_COLUMNS = ['id', 'ts', 'trace_id', 'span_id', 'parent_span_id', 'service_name', 'name', 'duration_ms', 'data'] as const

/** Every span of one trace, in start order (at most `max`). */
export async function traceSpans(ctx: PortalContext, projectId: string, traceId: string, max: number): Promise<SpanRow[]> {
  const rows = await spans(ctx)
    .selectFrom('trace_events')
    .select([...SPAN_COLUMNS, ...store(ctx).dataColumns] as never[])
    .where('project_id', '=', projectId)
    .where('trace_id', '=', traceId)
    .orderBy('ts', 'asc')
    .orderBy('id', 'asc')
    .limit(max)
    .execute()
  return (rows as Record<string, unknown>[]).map((row) => spanOf(ctx, row))
}

/** Start, end and root span of each trace. */
export async function traceSummaries(ctx: PortalContext, projectId: string, traceIds: string[]): Promise<Map<string, TraceSummary>> {
  const summaries = new Map<string, TraceSummary>()
  if (traceIds.length === 0) return summaries
  // One pass over the traces' spans: their extent, and the root span's service and name.
  const rows = await spans(ctx)
    .selectFrom('trace_events')
    .select((eb) => [
      'trace_id',
      eb.fn.min('ts').as('start_ms'),
      sql<number>`max(ts + coalesce(duration_ms, 0))`.as('end_ms'),
      sql<string | null>`max(case when parent_span_id is null then service_name end)`.as('root_service'),
      sql<string | null>`max(case when parent_span_id is null then name end)`.as('root_name'),
    ])
    .where('project_id', '=', projectId)
    .where('trace_id', 'in', traceIds)
    .groupBy('trace_id')
    .execute()
  for (const row of rows) {
    summaries.set(row.trace_id, { traceId: row.trace_id, startMs: Number(row.start_ms), endMs: Number(row.end_ms), rootServiceName: row.root_service ?? null, rootName: row.root_name ?? null })
  }
  return summaries
}

const TRACE_LEVEL = new Set(['traceDuration', 'rootName', 'rootServiceName'])

/** Whether a condition reads the trace (its duration or root) rather than the span alone. */
export function readsTrace(condition: Condition): boolean {
  if (condition.kind === 'all') return false
  if (condition.kind === 'compare') return condition.field.kind === 'intrinsic' && TRACE_LEVEL.has(condition.field.name)
  return readsTrace(condition.left) || readsTrace(condition.right)
}

type Pushed = { where: Expression<SqlBool>; exact: boolean } | undefined

const SQL_OPS: Partial<Record<FieldOp, string>> = { '=': '=', '!=': '<>', '>': '>', '>=': '>=', '<': '<', '<=': '<=' }

/**
 * What the database can apply of a span condition: the intrinsics in columns (duration, name, service), status and
 * kind, and attribute equality, as the payload's text. `exact` is false when some of it is left to `spanMatches`.
 */
export function pushDown(ctx: PortalContext, condition: Condition): Pushed {
  switch (condition.kind) {
    case 'all':
      return { where: sql<SqlBool>`1 = 1`, exact: true }
    case 'and': {
      const left = pushDown(ctx, condition.left)
      const right = pushDown(ctx, condition.right)
      if (left && right) return { where: sql<SqlBool>`(${left.where} and ${right.where})`, exact: left.exact && right.exact }
      const one = left ?? right
      return one && { where: one.where, exact: false }
    }
    case 'or': {
      const left = pushDown(ctx, condition.left)
      const right = pushDown(ctx, condition.right)
      if (!left || !right) return undefined
      return { where: sql<SqlBool>`(${left.where} or ${right.where})`, exact: left.exact && right.exact }
    }
    case 'compare':
      return compareInSql(ctx, condition.field, condition.op, condition.value)
  }
}

function compareInSql(ctx: PortalContext, field: Field, op: FieldOp, value: Literal): Pushed {
  const sqlOp = SQL_OPS[op]
  if (!sqlOp) return undefined
  const against = (column: Expression<unknown>, literal: unknown) => ({ where: sql<SqlBool>`${column} ${sql.raw(sqlOp)} ${literal}`, exact: true })
  if (field.kind === 'intrinsic') {
    if (field.name === 'duration' && (value.type === 'duration' || value.type === 'number')) return against(sql.ref('duration_ms'), value.type === 'number' ? value.value / 1e6 : value.value)
    if (field.name === 'name' && value.type === 'string') return against(sql.ref('name'), value.value)
    if ((field.name === 'status' || field.name === 'kind') && value.type === 'enum' && (op === '=' || op === '!=')) {
      return against(store(ctx).jsonPathText('data', field.name === 'status' ? ['status', 'code'] : ['kind']), value.value)
    }
    return undefined
  }
  if (field.key === 'service.name' && field.scope !== 'span' && value.type === 'string') return against(sql.ref('service_name'), value.value)
  if ((op === '=' || op === '!=') && value.type !== 'enum' && value.type !== 'duration') {
    return against(store(ctx).jsonPathText('data', ['attributes', field.key]), String(value.value))
  }
  return undefined
}

/** The spans of the window that the database finds for `condition`, newest first, at most `max`. */
export async function candidateSpans(ctx: PortalContext, projectId: string, where: Expression<SqlBool>, window: { fromMs?: number; toMs?: number }, max: number): Promise<SpanRow[]> {
  let query = spans(ctx)
    .selectFrom('trace_events')
    .select([...SPAN_COLUMNS, ...store(ctx).dataColumns] as never[])
    .where('project_id', '=', projectId)
    .where(where)
  if (window.fromMs !== undefined) query = query.where('ts', '>=', window.fromMs)
  if (window.toMs !== undefined) query = query.where('ts', '<', window.toMs)
  const rows = await query.orderBy('ts', 'desc').orderBy('id', 'desc').limit(max).execute()
  return (rows as Record<string, unknown>[]).map((row) => spanOf(ctx, row))
}

/**
 * The newest spans `where` selects until they belong to `limit` traces (or SCAN_WINDOW spans are read), in
 * batches down the (project, time) order: the first page of a search reads little more than it shows.
 */
export async function newestMatchingSpans(ctx: PortalContext, projectId: string, where: Expression<SqlBool>, window: { fromMs?: number; toMs?: number }, limit: number): Promise<{ traceIds: string[]; spans: SpanRow[] }> {
  const traceIds = new Set<string>()
  const found: SpanRow[] = []
  let batch = Math.max(limit * 4, 100)
  let after: SpanRow | undefined
  while (found.length < SCAN_WINDOW) {
    const keyset = after ? sql<SqlBool>`(${where} and (${sql.ref('ts')}, ${sql.ref('id')}) < (${after.ts}, ${after.id}))` : where
    const rows = await candidateSpans(ctx, projectId, keyset, window, batch)
    for (const span of rows) {
      if (traceIds.size < limit) traceIds.add(span.traceId)
      found.push(span)
    }
    if (traceIds.size >= limit || rows.length < batch) break
    after = rows[rows.length - 1]
    batch = Math.min(batch * 4, SCAN_WINDOW)
  }
  return { traceIds: [...traceIds], spans: found.filter((span) => traceIds.has(span.traceId)) }
}

function attributeOf(span: SpanRow, field: Extract<Field, { kind: 'attribute' }>): unknown {
  if (field.key === 'service.name' && field.scope !== 'span') return span.serviceName ?? undefined
  const attributes = span.data.attributes
  return typeof attributes === 'object' && attributes !== null ? (attributes as Record<string, unknown>)[field.key] : undefined
}

function fieldValue(span: SpanRow, field: Field, trace: TraceSummary | undefined): unknown {
  if (field.kind === 'attribute') return attributeOf(span, field)
  const status = span.data.status as { code?: string; message?: string } | undefined
  switch (field.name) {
    case 'duration':
      return span.durationMs ?? undefined
    case 'name':
      return span.name ?? undefined
    case 'status':
      return status?.code ?? 'unset'
    case 'statusMessage':
      return status?.message ?? ''
    case 'kind':
      return span.data.kind ?? 'unspecified'
    case 'traceDuration':
      return trace ? trace.endMs - trace.startMs : undefined
    case 'rootName':
      return trace?.rootName ?? undefined
    case 'rootServiceName':
      return trace?.rootServiceName ?? undefined
  }
}

function compareValues(actual: unknown, op: FieldOp, literal: Literal): boolean {
  if (actual === undefined || actual === null) return false
  if (op === '=~' || op === '!~') {
    if (literal.type !== 'string') throw new TraceqlError('parse error: =~ and !~ take a string')
    let matches: boolean
    try {
      matches = new RegExp(`^(?:${literal.value})$`).test(String(actual))
    } catch (error) {
      throw new TraceqlError(`parse error: invalid regular expression ${JSON.stringify(literal.value)}: ${(error as Error).message}`)
    }
    return op === '=~' ? matches : !matches
  }
  const expected = literal.type === 'duration' ? literal.value : literal.value
  const left = typeof expected === 'number' ? Number(actual) : typeof expected === 'boolean' ? actual === true || actual === 'true' : String(actual)
  if (typeof expected === 'number' && Number.isNaN(left)) return false
  switch (op) {
    case '=':
      return left === expected
    case '!=':
      return left !== expected
    case '>':
      return (left as number | string) > (expected as number | string)
    case '>=':
      return (left as number | string) >= (expected as number | string)
    case '<':
      return (left as number | string) < (expected as number | string)
    case '<=':
      return (left as number | string) <= (expected as number | string)
  }
}

/** Whether a span (of `trace`, when the condition reads the trace) satisfies the condition. */
export function spanMatches(span: SpanRow, condition: Condition, trace?: TraceSummary): boolean {
  switch (condition.kind) {
    case 'all':
      return true
    case 'and':
      return spanMatches(span, condition.left, trace) && spanMatches(span, condition.right, trace)
    case 'or':
      return spanMatches(span, condition.left, trace) || spanMatches(span, condition.right, trace)
    case 'compare': {
      const actual = fieldValue(span, condition.field, trace)
      return compareValues(actual, condition.op, condition.value)
    }
  }
}

/** The spansets of a trace-level query, left to right. */
export function spansets(query: TraceQuery): Condition[] {
  return query.kind === 'spanset' ? [query.condition] : [...spansets(query.left), ...spansets(query.right)]
}

/** Distinct values of a span column over the window, sorted, at most `max`. */
export async function distinctValues(ctx: PortalContext, projectId: string, column: 'service_name' | 'name', window: { fromMs?: number; toMs?: number }, max: number): Promise<string[]> {
  let query = spans(ctx).selectFrom('trace_events').select(column).distinct().where('project_id', '=', projectId).where(column, 'is not', null)
  if (window.fromMs !== undefined) query = query.where('ts', '>=', window.fromMs)
  if (window.toMs !== undefined) query = query.where('ts', '<', window.toMs)
  const rows = await query.orderBy(column).limit(max).execute()
  return rows.map((row) => String(row[column]))
}
