import { Type, type TProperties, type TSchema } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PortalContext } from '../../context.ts'
import { Problem, problemResponses } from '../../http/problem.ts'
import { queryApiErrorHandler } from '../api-responses.ts'
import { parsePrometheusTimeMs, parseStepMs } from '../durations.ts'
import { TenantError, TenantQuery, tenantProject } from '../tenancy.ts'
import { compareLabels, formatSample } from '../samples.ts'
import { evaluatePromql, type PromValue } from './evaluate.ts'
import { seriesLabels } from './metric-rows.ts'
import { parsePromql, PromqlError, type LabelMatcher } from './promql.ts'

const MAX_POINTS = 11_000
const DEFAULT_LOOKBACK_RANGE_MS = 3_600_000

class BadData extends Error {}

function prometheusError(error: unknown) {
  if (error instanceof PromqlError || error instanceof BadData) return { status: 400, message: error.message }
  if (error instanceof TenantError) return { status: error.status, message: error.message }
  return undefined
}

function sendError(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).type('application/json').send({ status: 'error', errorType: status === 404 ? 'not_found' : 'bad_data', error: message })
}

const PrometheusError = Type.Object({ status: Type.Literal('error'), errorType: Type.String({ description: 'bad_data, not_found, …' }), error: Type.String() })
/** Prometheus' error body; a malformed URL is refused before any route, with the portal's problem body, so 400 lists both. */
const errorEntry = (description: string, status: number): TSchema => {
  const content: Record<string, { schema: TSchema }> = { 'application/json': { schema: PrometheusError } }
  if (status === 400) content['application/problem+json'] = { schema: Problem }
  return { description, content } as unknown as TSchema
}

const Labels = Type.Record(Type.String(), Type.String())
const SamplePair = Type.Array(Type.Union([Type.Number(), Type.String()]), { minItems: 2, maxItems: 2, description: '[unix seconds, the value as text]' })
const Success = (data: TSchema) => Type.Object({ status: Type.Literal('success'), data })
const QueryData = Type.Union([
  Type.Object({ resultType: Type.Literal('vector'), result: Type.Array(Type.Object({ metric: Labels, value: SamplePair })) }),
  Type.Object({ resultType: Type.Literal('scalar'), result: SamplePair }),
])
const RangeData = Type.Object({ resultType: Type.Literal('matrix'), result: Type.Array(Type.Object({ metric: Labels, values: Type.Array(SamplePair) })) })

type Parameters = Record<string, string | string[] | undefined>

const single = (params: Parameters, name: string) => {
  const value = params[name]
  return Array.isArray(value) ? value[value.length - 1] : value
}
const list = (params: Parameters, name: string) => [params[name] ?? []].flat()

function time(params: Parameters, name: string, fallback: number): number {
  const value = single(params, name)
  if (value === undefined || value === '') return fallback
  const ms = parsePrometheusTimeMs(value)
  if (ms === undefined || !Number.isFinite(ms)) throw new BadData(`invalid parameter "${name}": cannot parse "${value}" to a valid timestamp`)
  return ms
}

function selectorsOf(values: string[]): LabelMatcher[][] {
  return values.map((text) => {
    const parsed = parsePromql(text)
    if (parsed.kind !== 'selector') throw new BadData(`invalid parameter "match[]": ${JSON.stringify(text)} is not a series selector`)
    return parsed.selector.matchers
  })
}

function result(value: PromValue, at: number) {
  if (value.kind === 'scalar') return { resultType: 'scalar' as const, result: [at / 1000, formatSample(value.values[0])] }
  return {
    resultType: 'vector' as const,
    result: value.series
      .filter((member) => member.values[0] !== undefined)
      .sort((a, b) => compareLabels(a.labels, b.labels))
      .map((member) => ({ metric: member.labels, value: [at / 1000, formatSample(member.values[0]!)] })),
  }
}

async function instantQuery(ctx: PortalContext, request: FastifyRequest, params: Parameters) {
  const projectId = await tenantProject(ctx, request)
  const query = single(params, 'query')
  if (!query) throw new BadData('invalid parameter "query": missing')
  const at = Math.round(time(params, 'time', Date.now()))
  return { status: 'success' as const, data: result(await evaluatePromql(ctx, projectId, parsePromql(query), [at]), at) }
}

async function rangeQuery(ctx: PortalContext, request: FastifyRequest, params: Parameters) {
  const projectId = await tenantProject(ctx, request)
  const query = single(params, 'query')
  if (!query) throw new BadData('invalid parameter "query": missing')
  const start = time(params, 'start', NaN)
  const end = time(params, 'end', NaN)
  if (Number.isNaN(start) || Number.isNaN(end)) throw new BadData('invalid parameter "start" or "end": both are required')
  if (end < start) throw new BadData('invalid parameter "end": end timestamp must not be before start time')
  const stepText = single(params, 'step')
  const step = stepText === undefined ? undefined : parseStepMs(stepText)
  if (step === undefined || !Number.isFinite(step) || step <= 0) throw new BadData('invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer')
  if ((end - start) / step > MAX_POINTS) throw new BadData(`exceeded maximum resolution of ${MAX_POINTS} points per timeseries. Try decreasing the query resolution (?step=XX)`)
  const times: number[] = []
  for (let t = Math.round(start); t <= end; t += Math.round(step) || 1) times.push(t)
  const value = await evaluatePromql(ctx, projectId, parsePromql(query), times)
  const series = value.kind === 'scalar' ? [{ labels: {}, values: value.values }] : value.series
  return {
    status: 'success' as const,
    data: {
      resultType: 'matrix' as const,
      result: [...series]
        .sort((a, b) => compareLabels(a.labels, b.labels))
        .map((member) => ({ metric: member.labels, values: member.values.flatMap((sample, i) => (sample === undefined ? [] : [[times[i] / 1000, formatSample(sample)]])) }))
        .filter((member) => member.values.length > 0),
    },
  }
}

async function seriesOf(ctx: PortalContext, request: FastifyRequest, params: Parameters, required: boolean) {
  const projectId = await tenantProject(ctx, request)
  const matches = list(params, 'match[]')
  if (required && matches.length === 0) throw new BadData('no match[] parameter provided')
  const end = time(params, 'end', Date.now())
  const start = time(params, 'start', end - DEFAULT_LOOKBACK_RANGE_MS)
  return seriesLabels(ctx, projectId, selectorsOf(matches), { fromMs: start, toMs: end + 1 })
}

/** Form bodies, as Prometheus' clients POST their queries. */
function formFields(body: string): Parameters {
  const fields: Parameters = {}
  for (const [name, value] of new URLSearchParams(body)) {
    const current = fields[name]
    fields[name] = current === undefined ? value : [current, value].flat()
  }
  return fields
}

/**
 * Prometheus' HTTP query API over the performance module and OTLP metrics (docs/grafana.md), under
 * `/prometheus`: Grafana's Prometheus data source and promtool take `http://portal/prometheus` as the server.
 * Each read is also answered to POST with a form body, as Prometheus does; those aliases are left out of the document.
 */
export const prometheusRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  app.setErrorHandler(queryApiErrorHandler(ctx, prometheusError, sendError))
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, formFields(body as string)))
  const TimeRange = {
    start: Type.Optional(Type.String({ description: 'RFC 3339 or unix seconds' })),
    end: Type.Optional(Type.String({ description: 'RFC 3339 or unix seconds' })),
    'match[]': Type.Optional(Type.Array(Type.String(), { description: 'series selectors' })),
  }
  const route = <Q extends TProperties, P extends TProperties = {}>(operationId: string, summary: string, description: string, querystring: Q, ok: TSchema, params?: P) => ({
    config: { access: 'read' as const, credentials: 'basic' as const },
    schema: {
      operationId,
      tags: ['prometheus'],
      summary,
      description: `${description} The project: \`X-Scope-OrgID: prj_…\`, or \`?project_id=\` in the server URL for clients that cannot set headers (promtool). Also answered to POST with a form body. Refusals are Prometheus’ error body.`,
      params: Type.Object(params ?? ({} as P)),
      querystring: Type.Object({ ...TenantQuery, ...querystring }, { additionalProperties: true }),
      response: {
        200: ok,
        400: errorEntry('The query or a parameter is refused (named in `error`), or no project is chosen.', 400),
        404: errorEntry('The project is not a live project of the token’s organisation.', 404),
        ...problemResponses(401, 403, 503),
      },
    },
  })
  const both = (path: string, options: ReturnType<typeof route>, handler: (request: FastifyRequest, params: Parameters) => Promise<unknown>) => {
    app.get(path, options, (request) => handler(request, request.query as Parameters))
    app.post(path, { config: options.config, schema: { hide: true } }, (request) => handler(request, { ...(request.query as Parameters), ...((request.body as Parameters | undefined) ?? {}) }))
  }

  both(
    '/prometheus/api/v1/query',
    route(
      'prometheusQuery',
      'PromQL at one instant',
      'Selectors, `rate`/`increase` (extrapolated as Prometheus does; OTLP delta points are summed), `*_over_time`, `sum`/`avg`/`min`/`max`/`count`/`topk`/`bottomk` by or without labels, arithmetic and comparisons, and `histogram_quantile` over the `_bucket` series of OTLP histograms.',
      { query: Type.String({ description: 'PromQL', examples: ['sum by (job) (rate(http_server_requests_total[5m]))'] }), time: Type.Optional(Type.String({ description: 'RFC 3339 or unix seconds; default now' })), timeout: Type.Optional(Type.String({ description: 'accepted and ignored' })) },
      Success(QueryData),
    ),
    (request, params) => instantQuery(ctx, request, params),
  )
  both(
    '/prometheus/api/v1/query_range',
    route(
      'prometheusQueryRange',
      'PromQL at start, start + step, … ≤ end',
      `The same PromQL as the instant query; at most ${MAX_POINTS} points per series.`,
      {
        query: Type.String({ description: 'PromQL' }),
        start: Type.String({ description: 'RFC 3339 or unix seconds' }),
        end: Type.String({ description: 'RFC 3339 or unix seconds' }),
        step: Type.String({ description: 'seconds or a duration' }),
        timeout: Type.Optional(Type.String({ description: 'accepted and ignored' })),
      },
      Success(RangeData),
    ),
    (request, params) => rangeQuery(ctx, request, params),
  )
  both(
    '/prometheus/api/v1/series',
    route('prometheusSeries', 'The series that selectors match', 'Default range: the last hour.', { ...TimeRange, 'match[]': Type.Array(Type.String(), { description: 'series selectors' }) }, Success(Type.Array(Labels))),
    async (request, params) => ({ status: 'success' as const, data: (await seriesOf(ctx, request, params, true)).sort(compareLabels) }),
  )
  both(
    '/prometheus/api/v1/labels',
    route('prometheusLabels', 'Label names of the series', 'Of the series `match[]` selects, or of all; default range: the last hour.', TimeRange, Success(Type.Array(Type.String()))),
    async (request, params) => ({ status: 'success' as const, data: [...new Set((await seriesOf(ctx, request, params, false)).flatMap(Object.keys))].sort() }),
  )
  app.get(
    '/prometheus/api/v1/label/:name/values',
    route('prometheusLabelValues', 'Values of one label', 'Of the series `match[]` selects, or of all; default range: the last hour.', TimeRange, Success(Type.Array(Type.String())), { name: Type.String({ description: 'a label name, `__name__` for metric names' }) }),
    async (request) => {
      const values = (await seriesOf(ctx, request, request.query as Parameters, false)).map((labels) => labels[request.params.name]).filter((value) => value !== undefined)
      return { status: 'success' as const, data: [...new Set(values)].sort() }
    },
  )
  app.get(
    '/prometheus/api/v1/status/buildinfo',
    {
      config: { access: 'read' as const, credentials: 'basic' as const },
      schema: {
        operationId: 'prometheusBuildInfo',
        tags: ['prometheus'],
        summary: 'The Prometheus API level this portal answers',
        description: 'Grafana reads it to choose its query features; no project.',
        response: {
          200: Success(Type.Object({ version: Type.String(), revision: Type.String(), branch: Type.String(), buildUser: Type.String(), buildDate: Type.String(), goVersion: Type.String() })),
          ...problemResponses(401, 403, 503),
        },
      },
    },
    async () => ({ status: 'success' as const, data: { version: '2.42.0', revision: 'observability-portal', branch: 'portal', buildUser: 'observability-portal', buildDate: '', goVersion: '' } }),
  )
}
