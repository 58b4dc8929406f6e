import { Type, type TProperties, type TSchema } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import type { PortalContext } from '../../context.ts'
import { plainTextError, queryApiErrorHandler, queryApiResponses } from '../api-responses.ts'
import { nanosString, parseDurationMs, parseLokiTimeMs, parseStepMs } from '../durations.ts'
import { TenantError, TenantQuery, tenantProject } from '../tenancy.ts'
import { compareLabels, formatSample } from '../samples.ts'
import { evaluateLogs, evaluateMetric, type MetricValue, type QueryStats } from './evaluate.ts'
import { indexStats, labelNames, STREAM_LABELS, streams } from './log-rows.ts'
import { LogqlError, parseLogql, type Matcher } from './logql.ts'

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 5_000
const DEFAULT_SINCE_MS = 3_600_000
/** Loki's limit of points per series in a range query. */
const MAX_POINTS = 11_000
const LABEL_VALUES_LIMIT = 1_000

const Labels = Type.Record(Type.String(), Type.String(), { description: 'label name → value' })
const Stats = Type.Object(
  {
    summary: Type.Object({
      bytesProcessedPerSecond: Type.Integer(),
      linesProcessedPerSecond: Type.Integer(),
      totalBytesProcessed: Type.Integer({ description: 'bytes of the lines the pipeline read (0 when the database counted)' }),
      totalLinesProcessed: Type.Integer(),
      execTime: Type.Number({ description: 'seconds' }),
      queueTime: Type.Number(),
      subqueries: Type.Integer(),
      totalEntriesReturned: Type.Integer(),
    }),
  },
  { description: 'what the query read: the summary of Loki’s statistics' },
)
/** [unix seconds, value as text]: a pair, as Prometheus writes samples. */
const SamplePair = Type.Array(Type.Union([Type.Number(), Type.String()]), { minItems: 2, maxItems: 2, description: '[unix seconds, the value as Prometheus writes floats]' })
const StreamsData = Type.Object({
  resultType: Type.Literal('streams'),
  result: Type.Array(Type.Object({ stream: Labels, values: Type.Array(Type.Array(Type.String(), { minItems: 2, maxItems: 2, description: '[unix nanoseconds, the line]' })) })),
  stats: Stats,
})
const MatrixData = Type.Object({ resultType: Type.Literal('matrix'), result: Type.Array(Type.Object({ metric: Labels, values: Type.Array(SamplePair) })), stats: Stats })
const VectorData = Type.Object({ resultType: Type.Literal('vector'), result: Type.Array(Type.Object({ metric: Labels, value: SamplePair })), stats: Stats })
const ScalarData = Type.Object({ resultType: Type.Literal('scalar'), result: SamplePair, stats: Stats })
const QueryAnswer = (data: TSchema) => Type.Object({ status: Type.Literal('success'), data })
const StringList = Type.Object({ status: Type.Literal('success'), data: Type.Array(Type.String()) })

const TimeRangeQuery = {
  start: Type.Optional(Type.String({ description: 'unix nanoseconds, unix seconds (with a dot, or up to 10 digits) or RFC 3339; default end − since' })),
  end: Type.Optional(Type.String({ description: 'as start; default now' })),
  since: Type.Optional(Type.String({ description: 'a duration back from end when start is absent (default 1h)' })),
}

/** `forward` or `backward`; logcli sends them in capitals. */
const Direction = Type.Optional(Type.Union([Type.Literal('forward'), Type.Literal('backward'), Type.Literal('FORWARD'), Type.Literal('BACKWARD')], { description: 'backward (newest first, the default) or forward' }))

class BadParameter extends Error {}

function lokiError(error: unknown) {
  if (error instanceof LogqlError || error instanceof BadParameter) return { status: 400, message: error.message }
  if (error instanceof TenantError) return { status: error.status, message: error.message }
  return undefined
}

function sendText(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).type('text/plain; charset=utf-8').send(message)
}

function timeParameter(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback
  const ms = parseLokiTimeMs(value)
  if (ms === undefined || !Number.isFinite(ms)) throw new BadParameter(`could not parse '${name}' parameter: ${JSON.stringify(value)} is not a unix time or RFC 3339 time`)
  return ms
}

function bounds(query: { start?: string; end?: string; since?: string }, now = Date.now()) {
  let sinceMs = DEFAULT_SINCE_MS
  if (query.since !== undefined) {
    const parsed = parseDurationMs(query.since)
    if (parsed === undefined) throw new BadParameter(`could not parse 'since' parameter: ${JSON.stringify(query.since)} is not a duration`)
    sinceMs = parsed
  }
  const endMs = timeParameter('end', query.end, now)
  const startMs = timeParameter('start', query.start, Math.min(endMs, now) - sinceMs)
  if (endMs < startMs) throw new BadParameter('end timestamp must not be before or equal to start time')
  return { startMs, endMs }
}

function summary(stats: QueryStats, startedAt: number, returned: number) {
  const seconds = Math.max((performance.now() - startedAt) / 1000, 1e-6)
  return {
    summary: {
      bytesProcessedPerSecond: Math.round(stats.bytesScanned / seconds),
      linesProcessedPerSecond: Math.round(stats.linesScanned / seconds),
      totalBytesProcessed: stats.bytesScanned,
      totalLinesProcessed: stats.linesScanned,
      execTime: seconds,
      queueTime: 0,
      subqueries: 0,
      totalEntriesReturned: returned,
    },
  }
}

function matrix(value: MetricValue, times: number[]) {
  const series = value.kind === 'scalar' ? [{ labels: {}, values: value.values }] : value.series
  return [...series]
    .sort((a, b) => compareLabels(a.labels, b.labels))
    .map((member) => ({
      metric: member.labels,
      values: member.values.flatMap((sample, step) => (sample === undefined ? [] : [[times[step] / 1000, formatSample(sample)] as [number, string]])),
    }))
}

/** The stream selectors of `match[]` (or of a query), each a selector without a pipeline. */
function selectors(values: string[]): Matcher[][] {
  return values.map((text) => {
    const parsed = parseLogql(text)
    if (parsed.kind !== 'logs' || parsed.selection.stages.length > 0) throw new LogqlError(`parse error: ${JSON.stringify(text)} is not a stream selector`)
    return parsed.selection.matchers
  })
}

/**
 * Grafana Loki's HTTP query API over the logs module (docs/grafana.md): what Grafana's Loki data source and
 * `logcli` call. Mounted at the root, so a data source's URL is the portal's own.
 */
export const lokiRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  app.setErrorHandler(queryApiErrorHandler(ctx, lokiError, sendText))
  const responses = (ok: TSchema) => queryApiResponses(ok, plainTextError)
  const route = <Q extends TProperties, R extends TSchema, P extends TProperties = {}>(operationId: string, summary: string, description: string, querystring: Q, ok: R, params?: P) => ({
    config: { access: 'read' as const, credentials: 'basic' as const },
    schema: {
      operationId,
      tags: ['loki'],
      summary,
      description: `${description} The project is the tenant: \`X-Scope-OrgID: prj_…\` (or \`?project_id=\`). Refusals are plain text, as Loki’s.`,
      params: Type.Object(params ?? ({} as P)),
      querystring: Type.Object({ ...TenantQuery, ...querystring }),
      response: { ...responses(ok), 200: ok },
    },
  })

  app.get(
    '/loki/api/v1/query_range',
    route(
      'lokiQueryRange',
      'LogQL over a time range: log lines (streams) or a metric query’s series (matrix)',
      'A log query returns the newest (`direction=backward`, the default) or oldest `limit` lines of [start, end) that its selector and pipeline keep, grouped into streams by their labels. ' +
        'A metric query is evaluated at start, start + step, … ≤ end; `count_over_time` and `rate` over `{level…}` selectors with whole-hour steps and ranges read the hourly level counts.',
      {
        query: Type.String({ description: 'LogQL', examples: ['sum by (level) (count_over_time({module="billing"} |= "timeout" [5m]))'] }),
        limit: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIMIT, description: `lines a log query returns (default ${DEFAULT_LIMIT})` })),
        ...TimeRangeQuery,
        step: Type.Optional(Type.String({ description: 'metric queries: seconds or a duration (default (end − start) / 250, at least 1 s)' })),
        interval: Type.Optional(Type.String({ description: 'accepted and ignored: every line is returned' })),
        direction: Direction,
      },
      QueryAnswer(Type.Union([StreamsData, MatrixData])),
    ),
    async (request) => {
      const startedAt = performance.now()
      const projectId = await tenantProject(ctx, request)
      const { query, limit = DEFAULT_LIMIT, step } = request.query
      const direction = request.query.direction?.toLowerCase() === 'forward' ? 'forward' : 'backward'
      const parsed = parseLogql(query)
      const { startMs, endMs } = bounds(request.query)
      const stats: QueryStats = { linesScanned: 0, bytesScanned: 0 }
      if (parsed.kind === 'logs') {
        const result = await evaluateLogs(ctx, projectId, parsed.selection, { fromMs: startMs, toMs: endMs }, direction, limit || DEFAULT_LIMIT, stats)
        const returned = result.reduce((sum, stream) => sum + stream.entries.length, 0)
        return {
          status: 'success' as const,
          data: {
            resultType: 'streams' as const,
            result: result.map((stream) => ({ stream: stream.labels, values: stream.entries.map((entry) => [nanosString(entry.ts), entry.line] as [string, string]) })),
            stats: summary(stats, startedAt, returned),
          },
        }
      }
      const stepMs = step === undefined ? Math.max(Math.floor((endMs - startMs) / 250_000), 1) * 1000 : parseStepMs(step)
      if (stepMs === undefined || !Number.isFinite(stepMs)) throw new BadParameter(`cannot parse "${step}" to a valid duration`)
      if (stepMs <= 0) throw new BadParameter('zero or negative query resolution step widths are not accepted. Try a positive integer')
      if ((endMs - startMs) / stepMs > MAX_POINTS) throw new BadParameter(`exceeded maximum resolution of ${MAX_POINTS} points per timeseries. Try decreasing the query resolution (?step=XX)`)
      // Evaluation times on multiples of the step (start rounded down, end up), as Loki's query frontend aligns them.
      const stepWidth = Math.max(Math.round(stepMs), 1)
      const times: number[] = []
      for (let t = Math.floor(startMs / stepWidth) * stepWidth; t <= Math.ceil(endMs / stepWidth) * stepWidth; t += stepWidth) times.push(t)
      const value = await evaluateMetric(ctx, projectId, parsed.expr, times, stats)
      const result = matrix(value, times)
      return { status: 'success' as const, data: { resultType: 'matrix' as const, result, stats: summary(stats, startedAt, result.length) } }
    },
  )

  app.get(
    '/loki/api/v1/query',
    route(
      'lokiQuery',
      'A LogQL metric query at one instant (vector), such as Grafana’s health check `vector(1)+vector(1)`',
      'Evaluated at `time` (default now). Log queries are refused here, as Loki 3 does: use query_range.',
      {
        query: Type.String({ description: 'LogQL metric query', examples: ['sum by (level) (count_over_time({module="billing"}[1h]))'] }),
        time: Type.Optional(Type.String({ description: 'unix nanoseconds, seconds or RFC 3339; default now' })),
        limit: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIMIT, description: 'accepted and ignored: a metric query has no lines to limit' })),
        direction: Direction,
      },
      QueryAnswer(Type.Union([VectorData, ScalarData])),
    ),
    async (request) => {
      const startedAt = performance.now()
      const projectId = await tenantProject(ctx, request)
      const parsed = parseLogql(request.query.query)
      if (parsed.kind === 'logs') throw new BadParameter('log queries are not supported as an instant query type, please change your query to a range query type')
      const time = Math.round(timeParameter('time', request.query.time, Date.now()))
      const stats: QueryStats = { linesScanned: 0, bytesScanned: 0 }
      const value = await evaluateMetric(ctx, projectId, parsed.expr, [time], stats)
      if (value.kind === 'scalar') {
        return { status: 'success' as const, data: { resultType: 'scalar' as const, result: [time / 1000, formatSample(value.values[0])] as [number, string], stats: summary(stats, startedAt, 1) } }
      }
      const result = value.series
        .filter((member) => member.values[0] !== undefined)
        .sort((a, b) => compareLabels(a.labels, b.labels))
        .map((member) => ({ metric: member.labels, value: [time / 1000, formatSample(member.values[0]!)] as [number, string] }))
      return { status: 'success' as const, data: { resultType: 'vector' as const, result, stats: summary(stats, startedAt, result.length) } }
    },
  )

  app.get(
    '/loki/api/v1/labels',
    route('lokiLabels', 'Names of the stream labels that logs of the range carry', `Among ${STREAM_LABELS.map((label) => `\`${label}\``).join(', ')}.`, TimeRangeQuery, StringList),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const { startMs, endMs } = bounds(request.query)
      return { status: 'success' as const, data: await labelNames(ctx, projectId, { fromMs: startMs, toMs: endMs }) }
    },
  )

  app.get(
    '/loki/api/v1/label/:name/values',
    route(
      'lokiLabelValues',
      'Values of one stream label over the range',
      `Sorted; at most ${LABEL_VALUES_LIMIT}. A label that is not a stream label has none. \`query\` narrows to the streams of a selector.`,
      { ...TimeRangeQuery, query: Type.Optional(Type.String({ description: 'a stream selector' })) },
      StringList,
      { name: Type.String({ description: 'a label name' }) },
    ),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const { startMs, endMs } = bounds(request.query)
      const matchers = request.query.query ? selectors([request.query.query])[0] : []
      const found = await streams(ctx, projectId, matchers, { fromMs: startMs, toMs: endMs })
      const values = new Set(found.map((labels) => labels[request.params.name]).filter((value) => value !== undefined))
      return { status: 'success' as const, data: [...values].sort().slice(0, LABEL_VALUES_LIMIT) }
    },
  )

  app.get(
    '/loki/api/v1/series',
    route(
      'lokiSeries',
      'The streams (label sets) that selectors match over the range',
      'Each `match[]` is a stream selector; a stream matched by any is listed once. Without one, every stream.',
      { ...TimeRangeQuery, 'match[]': Type.Optional(Type.Array(Type.String(), { description: 'stream selectors, e.g. {level="error"}' })) },
      Type.Object({ status: Type.Literal('success'), data: Type.Array(Labels) }),
    ),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const { startMs, endMs } = bounds(request.query)
      const range = { fromMs: startMs, toMs: endMs }
      const matches = request.query['match[]'] ?? []
      const found = matches.length === 0 ? await streams(ctx, projectId, [], range) : (await Promise.all(selectors(matches).map((matchers) => streams(ctx, projectId, matchers, range)))).flat()
      const unique = new Map(found.map((labels) => [JSON.stringify(Object.entries(labels).sort()), labels]))
      return { status: 'success' as const, data: [...unique.values()].sort(compareLabels) }
    },
  )

  app.get(
    '/loki/api/v1/index/stats',
    route(
      'lokiIndexStats',
      'How many streams, lines and bytes a selector covers over the range, for Grafana’s query size hint',
      'Bytes count the characters of the lines; `chunks` is 0, the portal keeps no chunks.',
      { ...TimeRangeQuery, query: Type.String({ description: 'a stream selector (a pipeline after it is ignored, as Loki does)' }) },
      Type.Object({ streams: Type.Integer(), chunks: Type.Integer(), entries: Type.Integer(), bytes: Type.Integer() }),
    ),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const { startMs, endMs } = bounds(request.query)
      const parsed = parseLogql(request.query.query)
      const matchers = parsed.kind === 'logs' ? parsed.selection.matchers : []
      return indexStats(ctx, projectId, matchers, { fromMs: startMs, toMs: endMs })
    },
  )

  app.get(
    '/loki/api/v1/status/buildinfo',
    {
      config: { access: 'read' as const, credentials: 'basic' as const },
      schema: {
        operationId: 'lokiBuildInfo',
        tags: ['loki'],
        summary: 'The Loki API level this portal answers, for clients that pick features by version',
        description: 'Version 2.8.0: Grafana then uses query_range for log volume, not the index/volume endpoints of later Loki versions.',
        response: {
          ...queryApiResponses(Type.Object({}), plainTextError),
          200: Type.Object({ version: Type.String(), revision: Type.String(), branch: Type.String(), buildUser: Type.String(), buildDate: Type.String(), goVersion: Type.String() }),
        },
      },
    },
    async () => ({ version: '2.8.0', revision: 'observability-portal', branch: 'portal', buildUser: 'observability-portal', buildDate: '', goVersion: '' }),
  )
}
