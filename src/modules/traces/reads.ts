import { Type } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { sql } from 'kysely'
import type { PortalContext } from '../../context.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, toPage } from '../../http/list.ts'
import { ProblemError } from '../../http/problem.ts'
import { IsoTime, Nullable, ProjectQuery, eventsDb, moduleReads, readRoute, requireReadableProject } from '../read-route.ts'
import { isoFromMs, withinTimeRange, TimeWindowQuery } from '../time-window.ts'
import type { TraceTables } from './tables.ts'

const MAX_SPANS = 10_000

const SpanSummary = named('SpanSummary', Type.Object({
  spanId: Type.String(),
  name: Nullable(Type.String()),
  serviceName: Nullable(Type.String()),
  durationMs: Nullable(Type.Number()),
}))

const TraceShape = {
  traceId: Type.String(),
  rootSpan: SpanSummary,
  route: Nullable(Type.String({ description: 'the root span’s `http.route` attribute (OpenTelemetry HTTP semantic conventions), when it has one' })),
  statusCode: Nullable(Type.Integer({ description: 'the root span’s `http.response.status_code` (or the older `http.status_code`), when it has one' })),
  spanCount: Type.Integer(),
  services: Type.Array(Type.String(), { description: 'services with a span in the trace, by name' }),
  startedAt: IsoTime('the earliest span’s time'),
  durationMs: Type.Number({ description: 'from the earliest span’s start to the latest end (start + durationMs) of any span' }),
}

const Span = named('Span', Type.Object({
  eventId: Type.String(),
  spanId: Type.String(),
  parentSpanId: Nullable(Type.String()),
  serviceName: Nullable(Type.String()),
  name: Nullable(Type.String()),
  startedAt: IsoTime('the span event’s `ts`'),
  durationMs: Nullable(Type.Number()),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the span event’s payload as sent' }),
}))

const { route: _route, statusCode: _statusCode, ...DetailShape } = TraceShape

const TraceDetail = named('TraceDetail', Type.Object({
  ...DetailShape,
  rootSpan: Nullable(SpanSummary),
  spans: Type.Array(Span, { description: `in start order, at most ${MAX_SPANS}` }),
  truncated: Type.Boolean({ description: `true when the trace has more than ${MAX_SPANS} spans` }),
}))

interface TraceExtent {
  spanCount: number
  services: string[]
  startMs: number
  endMs: number
}

/** Span count, services and time extent of each trace. */
async function traceExtents(ctx: PortalContext, projectId: string, traceIds: string[]): Promise<Map<string, TraceExtent>> {
  const extents = new Map<string, TraceExtent>()
  if (traceIds.length === 0) return extents
  const rows = await eventsDb<TraceTables>(ctx, 'trace_events')
    .selectFrom('trace_events')
    .select((eb) => [
      'trace_id',
      'service_name',
      eb.fn.countAll().as('spans'),
      eb.fn.min('ts').as('start_ms'),
      sql<number>`max(ts + coalesce(duration_ms, 0))`.as('end_ms'),
    ])
    .where('project_id', '=', projectId)
    .where('trace_id', 'in', traceIds)
    .groupBy(['trace_id', 'service_name'])
    .execute()
  for (const row of rows) {
    const extent = extents.get(row.trace_id) ?? { spanCount: 0, services: [], startMs: Infinity, endMs: -Infinity }
    extent.spanCount += Number(row.spans)
    if (row.service_name !== null) extent.services.push(row.service_name)
    extent.startMs = Math.min(extent.startMs, Number(row.start_ms))
    extent.endMs = Math.max(extent.endMs, Number(row.end_ms))
    extents.set(row.trace_id, extent)
  }
  for (const extent of extents.values()) extent.services.sort()
  return extents
}

function extentFields(extent: TraceExtent) {
  return { spanCount: extent.spanCount, services: extent.services, startedAt: isoFromMs(extent.startMs), durationMs: extent.endMs - extent.startMs }
}

function spanSummary(row: { span_id: string; name: string | null; service_name: string | null; duration_ms: number | null }) {
  return { spanId: row.span_id, name: row.name, serviceName: row.service_name, durationMs: row.duration_ms === null ? null : Number(row.duration_ms) }
}

/**
 * A span that failed: OTLP status `error`, or an HTTP server answer of 5xx under either semantic-convention
 * name (`http.response.status_code` since 1.23, `http.status_code` before). Its payload is the only place these live.
 */
function statusCodeOf(text: string | null): number | null {
  const code = Number(text)
  return text !== null && Number.isInteger(code) ? code : null
}

function isErrorSpan(ctx: PortalContext, data: string) {
  const text = (keys: string[]) => ctx.storage.eventsOf('trace_events').jsonPathText(data, keys)
  return sql<boolean>`(${text(['status', 'code'])} = 'error' or ${text(['attributes', 'http.response.status_code'])} like '5__' or ${text(['attributes', 'http.status_code'])} like '5__')`
}

export const traceReads = moduleReads((app, ctx) => {
  app.get(
    '',
    readRoute({
      tag: 'traces',
      operationId: 'listTraces',
      summary: 'Traces newest first, each with its root span, span count, services and total duration',
      description:
        'A trace is listed once its root span (a span without `parentSpanId`) has arrived, at the root span’s time; ' +
        '`from`/`to` apply to that time. `service` keeps traces with any span of that service; `min_duration_ms`/`max_duration_ms` ' +
        'bound the root span’s duration; `error` keeps traces with (or without) an error span.',
      query: {
        ...ProjectQuery,
        service: Type.Optional(Type.String({ description: 'traces with at least one span of this service' })),
        min_duration_ms: Type.Optional(Type.Number({ minimum: 0, description: 'traces whose root span lasted at least this long' })),
        max_duration_ms: Type.Optional(Type.Number({ minimum: 0, description: 'traces whose root span lasted at most this long' })),
        error: Type.Optional(
          Type.Boolean({ description: 'true: traces with an error span (OTLP status `error`, or an HTTP 5xx `http.response.status_code` / `http.status_code` attribute); false: traces without one' }),
        ),
        attribute: Type.Optional(
          Type.String({
            pattern: '^[^=]+=',
            'x-reason': 'must be name=value',
            description: '`name=value`: traces with a span whose attribute, or whose resource attribute (OTLP), `name` equals value (numbers and booleans as text), e.g. `http.route=/api/quote`',
          }),
        ),
        sort: Type.Optional(Type.Union([Type.Literal('time'), Type.Literal('duration')], { description: '`time` (default): newest first; `duration`: the slowest root spans first (traces whose root span has no duration are left out)' })),
        ...TimeWindowQuery('root spans'),
        ...PageQuery,
      },
      response: List(named('Trace', Type.Object(TraceShape))),
    }),
    async (request) => {
      const { project_id: projectId, service, from, to, limit = DEFAULT_LIMIT, cursor } = request.query
      const { min_duration_ms: minDurationMs, max_duration_ms: maxDurationMs, error, attribute, sort = 'time' } = request.query
      await requireReadableProject(ctx, request, projectId)
      const store = ctx.storage.eventsOf('trace_events')
      let roots = eventsDb<TraceTables>(ctx, 'trace_events')
        .selectFrom('trace_events as root')
        .select(['root.id', 'root.ts', 'root.trace_id', 'root.span_id', 'root.name', 'root.service_name', 'root.duration_ms'])
        .select([
          store.jsonPathText('root.data', ['attributes', 'http.route']).as('http_route'),
          store.jsonPathText('root.data', ['attributes', 'http.response.status_code']).as('http_status'),
          store.jsonPathText('root.data', ['attributes', 'http.status_code']).as('http_status_old'),
        ])
        .where('root.project_id', '=', projectId)
        .where('root.parent_span_id', 'is', null)
      roots = withinTimeRange(roots, from, to, 'root.ts')
      if (service !== undefined) {
        roots = roots.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('trace_events as span')
              .select('span.id')
              .whereRef('span.project_id', '=', 'root.project_id')
              .whereRef('span.trace_id', '=', 'root.trace_id')
              .where('span.service_name', '=', service),
          ),
        )
      }
      if (attribute !== undefined) {
        const name = attribute.slice(0, attribute.indexOf('='))
        const value = attribute.slice(attribute.indexOf('=') + 1)
        roots = roots.where((eb) =>
          eb.exists(
            eb
              .selectFrom('trace_events as span')
              .select('span.id')
              .whereRef('span.project_id', '=', 'root.project_id')
              .whereRef('span.trace_id', '=', 'root.trace_id')
              .where((inner) => inner.or([inner(store.jsonPathText('span.data', ['attributes', name]), '=', value), inner(store.jsonPathText('span.data', ['resource', name]), '=', value)])),
          ),
        )
      }
      if (minDurationMs !== undefined) roots = roots.where('root.duration_ms', '>=', minDurationMs)
      if (maxDurationMs !== undefined) roots = roots.where('root.duration_ms', '<=', maxDurationMs)
      if (error !== undefined) {
        roots = roots.where(({ exists, not, selectFrom }) => {
          const errorSpans = exists(
            selectFrom('trace_events as span')
              .select('span.id')
              .whereRef('span.project_id', '=', 'root.project_id')
              .whereRef('span.trace_id', '=', 'root.trace_id')
              .where(isErrorSpan(ctx, 'span.data')),
          )
          return error ? errorSpans : not(errorSpans)
        })
      }
      const byDuration = sort === 'duration'
      if (byDuration) roots = roots.where('root.duration_ms', 'is not', null)
      const rows = await pageAfter(roots, cursor, limit, byDuration ? 'root.duration_ms' : 'root.ts', 'root.id').execute()
      const extents = await traceExtents(ctx, projectId, [...new Set(rows.slice(0, limit).map((row) => row.trace_id as string))])
      return toPage(rows, limit, (row) => [Number(byDuration ? row.duration_ms : row.ts), row.id], (row) => ({
        traceId: row.trace_id,
        rootSpan: spanSummary(row),
        route: row.http_route,
        statusCode: statusCodeOf(row.http_status ?? row.http_status_old),
        ...extentFields(extents.get(row.trace_id)!),
      }))
    },
  )

  app.get(
    '/:traceId',
    readRoute({
      tag: 'traces',
      operationId: 'getTrace',
      summary: 'Every span of one trace, in start order, with the trace’s root span and total duration',
      description: `404 when the project has no span of this trace. At most ${MAX_SPANS} spans are returned.`,
      params: { traceId: Type.String({ description: 'the trace id the spans were sent with' }) },
      query: ProjectQuery,
      response: TraceDetail,
    }),
    async (request) => {
      const { project_id: projectId } = request.query
      const { traceId } = request.params
      await requireReadableProject(ctx, request, projectId)
      const rows = await eventsDb<TraceTables>(ctx, 'trace_events')
        .selectFrom('trace_events')
        .select(['id', 'ts', 'span_id', 'parent_span_id', 'service_name', 'name', 'duration_ms', 'data'])
        .where('project_id', '=', projectId)
        .where('trace_id', '=', traceId)
        .orderBy('ts', 'asc')
        .orderBy('id', 'asc')
        .limit(MAX_SPANS + 1)
        .execute()
      if (rows.length === 0) throw new ProblemError(404, 'not_found', `trace ${traceId} has no spans in project ${projectId}`)
      const extent = (await traceExtents(ctx, projectId, [traceId])).get(traceId)!
      const spans = rows.slice(0, MAX_SPANS)
      const root = rows.find((row) => row.parent_span_id === null)
      return {
        traceId,
        rootSpan: root ? spanSummary(root) : null,
        ...extentFields(extent),
        truncated: rows.length > MAX_SPANS,
        spans: spans.map((row) => ({
          eventId: row.id,
          spanId: row.span_id,
          parentSpanId: row.parent_span_id,
          serviceName: row.service_name,
          name: row.name,
          startedAt: isoFromMs(row.ts),
          durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
          data: ctx.storage.eventsOf('trace_events').dataOf(row),
        })),
      }
    },
  )
})
