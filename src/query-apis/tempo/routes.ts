import { Type, type TProperties, type TSchema } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import type { PortalContext } from '../../context.ts'
import { plainTextError, queryApiErrorHandler, queryApiResponses } from '../api-responses.ts'
import { TenantError, TenantQuery, tenantProject } from '../tenancy.ts'
import { resourceSpans, traceByIdResponseProtobuf, tracesDataProtobuf } from './otlp-trace.ts'
import { searchTraces, tagSearchQuery, tempoTrace } from './search.ts'
import { candidateSpans, distinctValues, traceSpans } from './span-rows.ts'
import { parseTraceql, TraceqlError } from './traceql.ts'
import { sql, type SqlBool } from 'kysely'

const MAX_SPANS = 10_000
const DEFAULT_LIMIT = 20
const MAX_LIMIT = 1_000
const DEFAULT_SPANS_PER_SPANSET = 3
/** Spans whose attributes are read to list tag names and values: the newest of the window. */
const TAG_SAMPLE = 5_000
const TAG_VALUES_LIMIT = 1_000
const STATUSES = ['error', 'ok', 'unset']
const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer']
const PROTOBUF = 'application/protobuf'

class TraceNotFound extends Error {}
class BadParameter extends Error {}

function tempoError(error: unknown) {
  if (error instanceof TraceqlError || error instanceof BadParameter) return { status: 400, message: error.message }
  if (error instanceof TraceNotFound) return { status: 404, message: error.message }
  if (error instanceof TenantError) return { status: error.status, message: error.message }
  return undefined
}

function sendText(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).type('text/plain; charset=utf-8').send(message)
}

/** Unix seconds (Tempo's `start`/`end`) as a window in milliseconds. */
function secondsWindow(start: string | undefined, end: string | undefined) {
  const read = (name: string, value: string | undefined) => {
    if (value === undefined || value === '') return undefined
    if (!/^\d+(\.\d+)?$/.test(value)) throw new BadParameter(`invalid ${name}: ${JSON.stringify(value)} is not unix seconds`)
    return Number(value) * 1000
  }
  const fromMs = read('start', start)
  const endMs = read('end', end)
  return { fromMs, toMs: endMs === undefined ? undefined : endMs + 1000 }
}

const AnyValue = Type.Record(Type.String(), Type.Unknown(), { description: 'an OTLP AnyValue' })
const KeyValue = Type.Object({ key: Type.String(), value: AnyValue })
const OtlpSpan = Type.Object(
  {
    traceId: Type.String(),
    spanId: Type.String(),
    parentSpanId: Type.Optional(Type.String()),
    name: Type.String(),
    kind: Type.Integer(),
    startTimeUnixNano: Type.String(),
    endTimeUnixNano: Type.String(),
    attributes: Type.Array(KeyValue),
  },
  { additionalProperties: true, description: 'an OTLP span, OTLP/JSON’s shape: ids in hex, 64-bit numbers as strings' },
)
const ResourceSpans = Type.Object({
  resource: Type.Object({ attributes: Type.Array(KeyValue) }),
  scopeSpans: Type.Array(Type.Object({ scope: Type.Object({ name: Type.String() }), spans: Type.Array(OtlpSpan) })),
})
const SearchSpan = Type.Object({ spanID: Type.String(), name: Type.Optional(Type.String()), startTimeUnixNano: Type.String(), durationNanos: Type.String(), attributes: Type.Array(KeyValue) })
const SpanSet = Type.Object({ spans: Type.Array(SearchSpan), matched: Type.Integer() })
const SearchResult = Type.Object({
  traces: Type.Array(
    Type.Object({
      traceID: Type.String(),
      rootServiceName: Type.String(),
      rootTraceName: Type.Optional(Type.String()),
      startTimeUnixNano: Type.String(),
      durationMs: Type.Integer(),
      spanSet: SpanSet,
      spanSets: Type.Array(SpanSet),
    }),
  ),
  metrics: Type.Object({ inspectedTraces: Type.Integer(), inspectedSpans: Type.Integer(), completedJobs: Type.Integer(), totalJobs: Type.Integer() }),
})

/** A trace body in JSON or, where `Accept` asks for it, protobuf (Grafana's Tempo data source asks). */
function traceBody(json: TSchema): TSchema {
  return {
    description: `The trace in JSON, or in protobuf when \`Accept: ${PROTOBUF}\``,
    content: { 'application/json': { schema: json }, [PROTOBUF]: { schema: Type.String({ format: 'binary' }) } },
  } as unknown as TSchema
}

/**
 * Grafana Tempo's HTTP API over the traces module (docs/grafana.md), under `/tempo`: the portal's own
 * `GET /api/traces/{traceId}` (its trace reads) keeps its path, and Grafana's Tempo data source takes
 * `http://portal/tempo` as its URL.
 */
export const tempoRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  app.setErrorHandler(queryApiErrorHandler(ctx, tempoError, sendText))
  const route = <Q extends TProperties, P extends TProperties = {}>(operationId: string, summary: string, description: string, querystring: Q, ok: TSchema, params?: P) => ({
    config: { access: 'read' as const, credentials: 'basic' as const },
    schema: {
      operationId,
      tags: ['tempo'],
      summary,
      description: `${description} The project is the tenant: \`X-Scope-OrgID: prj_…\` (or \`?project_id=\`). Refusals are plain text, as Tempo’s.`,
      params: Type.Object(params ?? ({} as P)),
      querystring: Type.Object({ ...TenantQuery, ...querystring }),
      response: { ...queryApiResponses(ok, plainTextError), 200: ok },
    },
  })
  const traceWindow = {
    start: Type.Optional(Type.String({ description: 'unix seconds; accepted, the whole trace is returned' })),
    end: Type.Optional(Type.String({ description: 'unix seconds; accepted, the whole trace is returned' })),
  }
  const TraceId = { traceId: Type.String({ description: 'the trace id, as sent (hex for OTLP)' }) }

  const readTrace = async (projectId: string, traceId: string) => {
    const spans = await traceSpans(ctx, projectId, traceId, MAX_SPANS)
    if (spans.length === 0) throw new TraceNotFound(`trace not found: ${traceId}`)
    return spans
  }
  const wantsProtobuf = (accept: string | undefined) => (accept ?? '').split(',').some((type) => type.trim().split(';')[0] === PROTOBUF)

  app.get(
    '/tempo/api/traces/:traceId',
    route('tempoTraceById', 'One trace by id, as Tempo’s v1 API returns it', `Every span (at most ${MAX_SPANS}) as OTLP: JSON \`{ batches: [ResourceSpans] }\`, or OTLP TracesData protobuf.`, traceWindow, traceBody(Type.Object({ batches: Type.Array(ResourceSpans) })), TraceId),
    async (request, reply) => {
      const projectId = await tenantProject(ctx, request)
      const spans = await readTrace(projectId, request.params.traceId)
      if (wantsProtobuf(request.headers.accept)) return reply.type(PROTOBUF).send(Buffer.from(tracesDataProtobuf(spans)))
      return reply.type('application/json').send({ batches: resourceSpans(spans) })
    },
  )

  app.get(
    '/tempo/api/v2/traces/:traceId',
    route('tempoTraceByIdV2', 'One trace by id, as Tempo’s v2 API returns it', 'JSON `{ trace: { resourceSpans } }`, or Tempo’s TraceByIDResponse protobuf.', traceWindow, traceBody(Type.Object({ trace: Type.Object({ resourceSpans: Type.Array(ResourceSpans) }) })), TraceId),
    async (request, reply) => {
      const projectId = await tenantProject(ctx, request)
      const spans = await readTrace(projectId, request.params.traceId)
      if (wantsProtobuf(request.headers.accept)) return reply.type(PROTOBUF).send(Buffer.from(traceByIdResponseProtobuf(spans)))
      return reply.type('application/json').send({ trace: { resourceSpans: resourceSpans(spans) } })
    },
  )

  app.get(
    '/tempo/api/search',
    route(
      'tempoSearch',
      'Traces matching a TraceQL query, or tags and a duration range, newest first',
      'With `q`, a TraceQL subset: spanset filters `{ … }` over `resource.service.name`, attributes, `name`, `duration`, `status`, `kind`, `traceDuration`, `rootName` and `rootServiceName` with `= != > >= < <= =~ !~`, joined by `&&`/`||` inside a spanset and between spansets; pipelines (`| count()`) are refused. ' +
        'Without it, `tags` (`key=value` pairs separated by spaces), `minDuration` and `maxDuration` (of the trace).',
      {
        q: Type.Optional(Type.String({ description: 'TraceQL', examples: ['{ resource.service.name = "checkout" && duration > 1s && status = error }'] })),
        tags: Type.Optional(Type.String({ description: 'logfmt-style key=value pairs, e.g. service.name=checkout http.status_code=500' })),
        minDuration: Type.Optional(Type.String({ description: 'e.g. 100ms' })),
        maxDuration: Type.Optional(Type.String({ description: 'e.g. 5s' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `traces returned (default ${DEFAULT_LIMIT})` })),
        spss: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: `matching spans shown per trace (default ${DEFAULT_SPANS_PER_SPANSET})` })),
        start: Type.Optional(Type.String({ description: 'unix seconds' })),
        end: Type.Optional(Type.String({ description: 'unix seconds' })),
      },
      SearchResult,
    ),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const { q, tags, minDuration, maxDuration, limit = DEFAULT_LIMIT, spss = DEFAULT_SPANS_PER_SPANSET } = request.query
      const query = q !== undefined && q.trim() !== '' ? parseTraceql(q) : tagSearchQuery(tags, minDuration, maxDuration)
      const { hits, inspected } = await searchTraces(ctx, projectId, query, secondsWindow(request.query.start, request.query.end), limit)
      return { traces: hits.map((hit) => tempoTrace(hit, spss)), metrics: { inspectedTraces: hits.length, inspectedSpans: inspected, completedJobs: 1, totalJobs: 1 } }
    },
  )

  const window = { start: Type.Optional(Type.String({ description: 'unix seconds' })), end: Type.Optional(Type.String({ description: 'unix seconds' })) }
  const sampleAttributes = async (projectId: string, range: { fromMs?: number; toMs?: number }) => {
    const spans = await candidateSpans(ctx, projectId, sql<SqlBool>`1 = 1`, range, TAG_SAMPLE)
    return spans.map((span) => (typeof span.data.attributes === 'object' && span.data.attributes !== null ? (span.data.attributes as Record<string, unknown>) : {}))
  }

  app.get(
    '/tempo/api/search/tags',
    route('tempoSearchTags', 'Names of the tags spans carry', `\`service.name\`, and the span attributes of the newest ${TAG_SAMPLE} spans.`, { ...window, scope: Type.Optional(Type.String({ description: 'accepted; every tag is listed' })) }, Type.Object({ tagNames: Type.Array(Type.String()) })),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const attributes = await sampleAttributes(projectId, secondsWindow(request.query.start, request.query.end))
      return { tagNames: [...new Set(['service.name', ...attributes.flatMap(Object.keys)])].sort() }
    },
  )

  app.get(
    '/tempo/api/v2/search/tags',
    route(
      'tempoSearchTagsV2',
      'Tag names by scope (resource, span, intrinsic), as Grafana’s TraceQL editor asks',
      `Resource: \`service.name\`; span: the attributes of the newest ${TAG_SAMPLE} spans; intrinsics the portal evaluates.`,
      { ...window, scope: Type.Optional(Type.String({ description: 'resource, span or intrinsic; default all' })), q: Type.Optional(Type.String({ description: 'accepted and ignored: tags are not narrowed by a query' })) },
      Type.Object({ scopes: Type.Array(Type.Object({ name: Type.String(), tags: Type.Array(Type.String()) })) }),
    ),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const attributes = await sampleAttributes(projectId, secondsWindow(request.query.start, request.query.end))
      const scopes = [
        { name: 'resource', tags: ['service.name'] },
        { name: 'span', tags: [...new Set(attributes.flatMap(Object.keys))].sort() },
        { name: 'intrinsic', tags: ['duration', 'kind', 'name', 'rootName', 'rootServiceName', 'status', 'statusMessage', 'traceDuration'] },
      ]
      const scope = request.query.scope
      return { scopes: scope && scope !== 'all' ? scopes.filter((entry) => entry.name === scope) : scopes }
    },
  )

  const tagValues = async (projectId: string, tag: string, range: { fromMs?: number; toMs?: number }): Promise<{ type: string; value: string }[]> => {
    const name = tag.replace(/^(resource|span)\./, '')
    if (name === 'service.name' && !tag.startsWith('span.')) return (await distinctValues(ctx, projectId, 'service_name', range, TAG_VALUES_LIMIT)).map((value) => ({ type: 'string', value }))
    if (tag === 'name') return (await distinctValues(ctx, projectId, 'name', range, TAG_VALUES_LIMIT)).map((value) => ({ type: 'string', value }))
    if (tag === 'status') return STATUSES.map((value) => ({ type: 'keyword', value }))
    if (tag === 'kind') return KINDS.map((value) => ({ type: 'keyword', value }))
    const values = new Map<string, { type: string; value: string }>()
    for (const attributes of await sampleAttributes(projectId, range)) {
      const value = attributes[name]
      if (value === undefined || value === null || typeof value === 'object') continue
      const type = typeof value === 'number' ? (Number.isInteger(value) ? 'int' : 'float') : typeof value === 'boolean' ? 'bool' : 'string'
      values.set(`${type} ${value}`, { type, value: String(value) })
    }
    return [...values.values()].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)).slice(0, TAG_VALUES_LIMIT)
  }
  const TagName = { tagName: Type.String({ description: 'a tag: service.name, an attribute, or (v2) resource.x, span.x, name, status, kind' }) }

  app.get(
    '/tempo/api/search/tag/:tagName/values',
    route('tempoSearchTagValues', 'Values of one tag', `At most ${TAG_VALUES_LIMIT}; attributes from the newest ${TAG_SAMPLE} spans.`, window, Type.Object({ tagValues: Type.Array(Type.String()) }), TagName),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      const values = await tagValues(projectId, request.params.tagName, secondsWindow(request.query.start, request.query.end))
      return { tagValues: [...new Set(values.map((entry) => entry.value))] }
    },
  )

  app.get(
    '/tempo/api/v2/search/tag/:tagName/values',
    route(
      'tempoSearchTagValuesV2',
      'Values of one tag with their types, as Grafana’s TraceQL editor asks',
      `At most ${TAG_VALUES_LIMIT}; attributes from the newest ${TAG_SAMPLE} spans.`,
      { ...window, q: Type.Optional(Type.String({ description: 'accepted and ignored: values are not narrowed by a query' })) },
      Type.Object({ tagValues: Type.Array(Type.Object({ type: Type.String(), value: Type.String() })) }),
      TagName,
    ),
    async (request) => {
      const projectId = await tenantProject(ctx, request)
      return { tagValues: await tagValues(projectId, request.params.tagName, secondsWindow(request.query.start, request.query.end)) }
    },
  )

  app.get(
    '/tempo/api/echo',
    {
      config: { access: 'read' as const, credentials: 'basic' as const },
      schema: {
        operationId: 'tempoEcho',
        tags: ['tempo'],
        summary: 'Answers `echo`: Grafana’s Tempo data source test',
        description: 'Needs a bearer like every query route; no project.',
        response: { ...queryApiResponses(Type.Object({}), plainTextError), 200: { description: 'echo', content: { 'text/plain': { schema: Type.Literal('echo') } } } as unknown as TSchema },
      },
    },
    async (_request, reply) => reply.type('text/plain; charset=utf-8').send('echo'),
  )

  app.get(
    '/tempo/api/status/buildinfo',
    {
      config: { access: 'read' as const, credentials: 'basic' as const },
      schema: {
        operationId: 'tempoBuildInfo',
        tags: ['tempo'],
        summary: 'The Tempo API level this portal answers, for clients that pick features by version',
        description: 'Version 2.4.0: trace by id v1 and v2, search with TraceQL, tags and tag values v1 and v2. No streaming (gRPC) search and no metrics queries.',
        response: {
          ...queryApiResponses(Type.Object({}), plainTextError),
          200: Type.Object({ version: Type.String(), revision: Type.String(), branch: Type.String(), buildUser: Type.String(), buildDate: Type.String(), goVersion: Type.String() }),
        },
      },
    },
    async () => ({ version: '2.4.0', revision: 'observability-portal', branch: 'portal', buildUser: 'observability-portal', buildDate: '', goVersion: '' }),
  )
}
