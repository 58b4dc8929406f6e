import { sql, type SqlBool } from 'kysely'
import type { PortalContext } from '../../context.ts'
import { nanosString, parseDurationMs } from '../durations.ts'
import { candidateSpans, newestMatchingSpans, pushDown, readsTrace, SCAN_WINDOW, spanMatches, spansets, traceSummaries, type SpanRow, type TraceSummary } from './span-rows.ts'
import { TraceqlError, type Condition, type TraceQuery } from './traceql.ts'

/**
 * Tempo's tag search (`tags=service.name=api http.status_code=500`, `minDuration`, `maxDuration`) as the
 * TraceQL it means: one spanset whose span has every tag, in a trace whose duration is in the bounds.
 */
export function tagSearchQuery(tags: string | undefined, minDuration: string | undefined, maxDuration: string | undefined): TraceQuery {
  const conditions: Condition[] = []
  for (const [, key, quoted, bare] of (tags ?? '').matchAll(/([^\s=]+)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/g)) {
    const value = quoted !== undefined ? (JSON.parse(`"${quoted}"`) as string) : bare
    if (key === 'name') conditions.push({ kind: 'compare', field: { kind: 'intrinsic', name: 'name' }, op: '=', value: { type: 'string', value } })
    else if (key === 'status.code' || key === 'status') conditions.push({ kind: 'compare', field: { kind: 'intrinsic', name: 'status' }, op: '=', value: { type: 'enum', value } })
    else if (key === 'error' && value === 'true') conditions.push({ kind: 'compare', field: { kind: 'intrinsic', name: 'status' }, op: '=', value: { type: 'enum', value: 'error' } })
    else conditions.push({ kind: 'compare', field: { kind: 'attribute', scope: 'any', key }, op: '=', value: { type: 'string', value } })
  }
  for (const [text, op] of [
    [minDuration, '>='],
    [maxDuration, '<='],
  ] as const) {
    if (text === undefined || text === '') continue
    const ms = parseDurationMs(text)
    if (ms === undefined) throw new TraceqlError(`invalid ${op === '>=' ? 'minDuration' : 'maxDuration'}: ${JSON.stringify(text)} is not a duration`)
    conditions.push({ kind: 'compare', field: { kind: 'intrinsic', name: 'traceDuration' }, op, value: { type: 'duration', value: ms } })
  }
  const condition = conditions.reduce<Condition>((all, next) => (all.kind === 'all' ? next : { kind: 'and', left: all, right: next }), { kind: 'all' })
  return { kind: 'spanset', condition }
}

export interface TraceHit {
  summary: TraceSummary
  matched: SpanRow[]
}

/** The traces of the window that the query matches, newest first, each with its matching spans. */
export async function searchTraces(ctx: PortalContext, projectId: string, query: TraceQuery, window: { fromMs?: number; toMs?: number }, limit: number): Promise<{ hits: TraceHit[]; inspected: number }> {
  const single = query.kind === 'spanset' ? query.condition : undefined
  const pushed = single && !readsTrace(single) ? pushDown(ctx, single) : undefined
  if (single && pushed?.exact) {
    // The database applies the whole condition: the newest matching spans name the traces of the page.
    const { traceIds, spans } = await newestMatchingSpans(ctx, projectId, pushed.where, window, limit)
    return { hits: await hitsOf(ctx, projectId, traceIds, spans, limit), inspected: spans.length }
  }
  let inspected = 0
  const matchedBySpanset = await Promise.all(
    spansets(query).map(async (condition) => {
      const prefilter = pushDown(ctx, condition)?.where ?? sql<SqlBool>`1 = 1`
      const candidates = await candidateSpans(ctx, projectId, prefilter, window, SCAN_WINDOW)
      inspected += candidates.length
      const traces = readsTrace(condition) ? await traceSummaries(ctx, projectId, [...new Set(candidates.map((span) => span.traceId))]) : undefined
      const matched = new Map<string, SpanRow[]>()
      for (const span of candidates) {
        if (!spanMatches(span, condition, traces?.get(span.traceId))) continue
        matched.set(span.traceId, [...(matched.get(span.traceId) ?? []), span])
      }
      return matched
    }),
  )
  let index = 0
  const combine = (node: TraceQuery): Map<string, SpanRow[]> => {
    if (node.kind === 'spanset') return matchedBySpanset[index++]
    const left = combine(node.left)
    const right = combine(node.right)
    const result = new Map<string, SpanRow[]>()
    for (const [traceId, spans] of left) if (node.kind === 'or' || right.has(traceId)) result.set(traceId, [...spans, ...(right.get(traceId) ?? [])])
    if (node.kind === 'or') for (const [traceId, spans] of right) if (!left.has(traceId)) result.set(traceId, spans)
    return result
  }
  const matched = combine(query)
  const newest = [...matched.entries()].sort(([, a], [, b]) => Math.max(...b.map((span) => span.ts)) - Math.max(...a.map((span) => span.ts)))
  const ids = newest.slice(0, limit).map(([traceId]) => traceId)
  return { hits: await hitsOf(ctx, projectId, ids, ids.flatMap((id) => matched.get(id)!), limit), inspected }
}

async function hitsOf(ctx: PortalContext, projectId: string, ids: string[], spans: SpanRow[], limit: number): Promise<TraceHit[]> {
  const summaries = await traceSummaries(ctx, projectId, ids)
  const hits = ids.map((traceId) => ({ summary: summaries.get(traceId)!, matched: spans.filter((span) => span.traceId === traceId) })).filter((hit) => hit.summary !== undefined)
  return hits.sort((a, b) => b.summary.startMs - a.summary.startMs).slice(0, limit)
}

/** A search hit in Tempo's shape, with up to `spansPerSpanSet` of its matching spans. */
export function tempoTrace(hit: TraceHit, spansPerSpanSet: number) {
  const { summary, matched } = hit
  const spanSet = {
    spans: matched.slice(0, spansPerSpanSet).map((span) => ({
      spanID: span.spanId,
      ...(span.name ? { name: span.name } : {}),
      startTimeUnixNano: nanosString(span.ts),
      durationNanos: nanosString(span.durationMs ?? 0),
      attributes: span.serviceName ? [{ key: 'service.name', value: { stringValue: span.serviceName } }] : [],
    })),
    matched: matched.length,
  }
  return {
    traceID: summary.traceId,
    rootServiceName: summary.rootServiceName ?? '<root span not yet received>',
    ...(summary.rootName !== null ? { rootTraceName: summary.rootName } : {}),
    startTimeUnixNano: nanosString(summary.startMs),
    durationMs: Math.round(summary.endMs - summary.startMs),
    spanSet,
    spanSets: [spanSet],
  }
}
