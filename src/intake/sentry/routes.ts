import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../../context.ts'
import { parseJsonBody } from '../../http/json-body.ts'
import { named } from '../../http/openapi-components.ts'
import { ProblemError, problemErrorHandler, problemResponses } from '../../http/problem.ts'
import type { ApiKeyPrincipal, IngestPipeline } from '../../ingest/pipeline.ts'
import { RATE_HEADERS } from '../../ingest/rate-limit.ts'
import { countSentryClientDiscarded, countSentryItemNotTaken } from '../../metrics/metrics.ts'
import { batchTooLarge, refuseDeclaredOversize } from '../../ingest/route.ts'
import { isPlainObject } from '../../ingest/validate-event.ts'
import { decodedBody } from '../compressed-body.ts'
import { parseEnvelope } from './envelope.ts'
import { translateSentryEvent, translateSentryTransaction, type PortalEvent } from './events.ts'
import { translateSentrySessions } from './sessions.ts'

const EMPTY_BODY = Buffer.alloc(0)

const Params = Type.Object({ projectNumber: Type.String({ pattern: '^[0-9]+$', description: 'the project’s number, as in its Sentry DSN' }) })
const Query = Type.Object(
  {
    sentry_key: Type.Optional(Type.String({ description: 'the DSN’s key, as browsers send it; servers send it in X-Sentry-Auth instead' })),
    sentry_version: Type.Optional(Type.String({ description: 'the Sentry protocol version the SDK speaks (`7`), as browsers send it; read from X-Sentry-Auth otherwise; not checked' })),
    sentry_client: Type.Optional(Type.String({ description: 'the SDK’s name and version (`sentry.javascript.browser/8.0.0`), as browsers send it; not checked' })),
  },
  { additionalProperties: true },
)
const Accepted = named(
  'SentryAccepted',
  Type.Object(
    { id: Type.Union([Type.String({ description: 'the event id' }), Type.Null()], { description: 'the id of the first event or transaction, as Sentry answers; null when the request held none' }) },
    { description: 'What Sentry’s own endpoints answer: the id of the event taken.', examples: [{ id: '9ec79c33ec9942ab8353589fcb2e04dc' }] },
  ),
)

const EVENT_EXAMPLE = {
  event_id: '9ec79c33ec9942ab8353589fcb2e04dc',
  timestamp: 1732390000.5,
  platform: 'javascript',
  level: 'error',
  release: 'shop@1.4.2',
  exception: { values: [{ type: 'TypeError', value: 'x is undefined', stacktrace: { frames: [{ function: 'checkout', filename: 'app.js', lineno: 42, in_app: true }] } }] },
}

/** An envelope: a header line, then for each item a header line and its payload. */
const Envelope = Type.String({
  description: 'A Sentry envelope: newline-separated JSON, a header line then an item header and payload per item (`event`, `transaction`, `session`, `sessions`; `client_report` is counted in the metrics; other item types are not kept and are answered in X-Sentry-Rate-Limits).',
  examples: [[JSON.stringify({ event_id: EVENT_EXAMPLE.event_id, sent_at: '2024-11-23T19:26:40.500Z' }), JSON.stringify({ type: 'event' }), JSON.stringify(EVENT_EXAMPLE)].join('\n')],
})

/** One event as the older store endpoint takes it; any field Sentry defines is read, none is required. */
const SentryEvent = Type.Object({}, { additionalProperties: true, description: 'A Sentry event (exception or message) as JSON.', examples: [EVENT_EXAMPLE] })

/**
 * CORS as Sentry's own ingest (Relay) answers it, so that browser SDKs on any origin can post and read
 * the answer, its rate limits among it: any origin (the DSN's key is public by design, and no cookie is
 * taken), the headers SDKs send, and the ones they read exposed.
 */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'x-sentry-error, x-sentry-rate-limits, retry-after',
}
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'GET, POST',
  'access-control-allow-headers':
    'x-sentry-auth, x-requested-with, x-forwarded-for, origin, referer, accept, content-type, authentication, authorization, content-encoding, transfer-encoding',
  'access-control-max-age': '3600',
}

/** What one request brought: the events for the pipeline, where each came from, and the categories of the items not taken. */
interface SentryIntake {
  eventId: string | null
  events: PortalEvent[]
  /** for each event, the item it came from (`envelope item 2 (event)`), which a refusal names */
  origins: string[]
  /** Sentry's data categories of items the portal does not keep, answered in X-Sentry-Rate-Limits */
  notTaken: Set<string>
}

/**
 * Sentry's data category of each envelope item type the portal does not keep. Such items are answered
 * as Relay answers a rate-limited category: the 200 names the category in X-Sentry-Rate-Limits, the
 * SDK stops sending it for that long and counts what it drops in its client reports.
 */
const CATEGORY_NOT_TAKEN: Record<string, string> = {
  attachment: 'attachment',
  profile: 'profile',
  profile_chunk: 'profile_chunk',
  replay_event: 'replay',
  replay_recording: 'replay',
  replay_video: 'replay',
  check_in: 'monitor',
  statsd: 'metric_bucket',
  metric_buckets: 'metric_bucket',
  user_report: 'user_report_v2',
  feedback: 'feedback',
  span: 'span',
  log: 'log_item',
  otel_log: 'log_item',
}
const NOT_TAKEN_SECONDS = 3600

/**
 * Sentry's envelope and store endpoints in front of the ingest pipeline, so that Sentry SDKs
 * initialised with the DSN the portal shows report to it unchanged. A key needs the `sentry` scope.
 */
export const sentryRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext; pipeline: IngestPipeline }> = async (app, { ctx, pipeline }) => {
  const maxBatchBytes = ctx.config.ingest.maxBatchBytes
  const handleError = problemErrorHandler(ctx.storage.isUnavailable)

  // Envelopes are not JSON as a whole, and browsers send them as text/plain: every body is read as bytes.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBatchBytes }, (_request, body, done) => done(null, body))

  const routes = [
    {
      path: '/api/:projectNumber/envelope/',
      operationId: 'sentryEnvelope',
      summary: 'Sentry envelope endpoint: events (exceptions, messages) and transactions from Sentry SDKs',
      // Browser SDKs send envelopes as text/plain (no CORS preflight); server SDKs as application/x-sentry-envelope.
      consumes: ['application/x-sentry-envelope', 'text/plain'],
      body: Envelope,
      problems: ['invalid_envelope', 'invalid_event'],
      read: (body: Buffer, receivedAt: number) => fromEnvelope(body, receivedAt),
    },
    {
      path: '/api/:projectNumber/store/',
      operationId: 'sentryStore',
      summary: 'Sentry’s older store endpoint: one event as JSON',
      consumes: ['application/json'],
      body: SentryEvent,
      problems: ['invalid_event'],
      read: (body: Buffer, receivedAt: number) => fromEvent(jsonObject(body, 'body'), receivedAt),
    },
  ]

  // Every answer of these routes, problems included: a browser hides from the SDK an answer without them.
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(CORS_HEADERS)
  })

  for (const route of routes) {
    // The preflight a browser sends before a POST with a non-simple content type or an X-Sentry-Auth header.
    app.options(route.path, { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => reply.code(200).headers(PREFLIGHT_HEADERS).send())
    app.post(
      route.path,
      {
        config: { access: 'apiKey', keyScope: 'sentry', credentials: 'sentry' },
        bodyLimit: maxBatchBytes,
        validatorCompiler: () => () => true,
        onRequest: async (request) => refuseDeclaredOversize(request, maxBatchBytes),
        errorHandler: (error, request, reply) => {
          const oversize = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          const problem = oversize ? batchTooLarge(maxBatchBytes) : error
          if (problem instanceof ProblemError && problem.status === 429) withSentryRateLimits(problem)
          return handleError.call(app, problem, request, reply)
        },
        schema: {
          tags: ['ingest'],
          operationId: route.operationId,
          summary: route.summary,
          description:
            'Authenticated by the DSN’s key in `X-Sentry-Auth: Sentry sentry_key=…` or `?sentry_key=`; the key needs the `sentry` scope (403) and the ' +
            'project number must be its project’s (404). Every event becomes an error occurrence (exceptions grouped by their chain and frames, messages by their template); ' +
            'transactions become trace spans; `session` and `sessions` items become `session` events (release health); other item types are not kept and are answered in X-Sentry-Rate-Limits. A request is stored whole or not at all: an event the portal refuses is a 400 naming its item and field. Envelopes come as application/x-sentry-envelope or, from browser SDKs, text/plain; Content-Encoding: gzip is taken. Each event counts against the project’s ' +
            'ingest limits: 429 carries Retry-After and X-Sentry-Rate-Limits. 200 means the events are committed. Field mapping: docs/intake.md.',
          security: [{ apiKey: [] }],
          params: Params,
          querystring: Query,
          headers: Type.Object({ 'x-sentry-auth': Type.Optional(Type.String({ description: 'Sentry sentry_version=7, sentry_key=<key>, sentry_client=…' })) }),
          // Documentation only: any media type is read as bytes (see the parser above), never validated by schema.
          consumes: route.consumes,
          body: route.body,
          response: {
            200: {
              description: 'Committed: every event and transaction of the request is stored.',
              headers: {
                ...RATE_HEADERS,
                'X-Sentry-Rate-Limits': {
                  type: 'string',
                  description: `when the envelope held items the portal does not keep (attachments, profiles, replays, …): \`${NOT_TAKEN_SECONDS}:<their categories>:key:unsupported\`, so that the SDK stops sending them and counts them in its client reports`,
                },
              },
              content: { 'application/json': { schema: Accepted } },
            },
            ...problemResponses(400, ...route.problems, 'invalid_gzip', 401, 403, 404, 413, 'batch_too_large', 415, 'unsupported_content_encoding', 429, 503),
          },
        },
      },
      async (request, reply) => {
        pipeline.refuseWhenBacklogged()
        const principal = request.principal as ApiKeyPrincipal
        const { projectNumber } = request.params as { projectNumber: string }
        if (!/^[0-9]+$/.test(projectNumber) || Number(projectNumber) !== principal.projectNumber) {
          throw new ProblemError(404, 'not_found', `project number ${projectNumber} was not found for this key; use the DSN shown when the key was created`)
        }
        const body = await decodedBody(Buffer.isBuffer(request.body) ? request.body : EMPTY_BODY, request.headers['content-encoding'], maxBatchBytes)
        const receivedAt = Date.now()
        const intake = route.read(body, receivedAt)
        if (intake.events.length > 0) {
          await pipeline.admit(principal, reply, intake.events.length)
          const { accepted, rejected } = await pipeline.check(principal.projectId, intake.events, receivedAt)
          // All or nothing: a 200 that stored part of a request would lose the rest unseen.
          if (rejected.length > 0) {
            throw new ProblemError(400, 'invalid_event', `nothing was stored: ${rejected.map((item) => `${intake.origins[item.index]}: ${item.reason}`).join('; ')}`)
          }
          await pipeline.commit({ projectId: principal.projectId, key: undefined, response: { statusCode: 200, body: '' }, accepted })
        }
        if (intake.notTaken.size > 0) reply.header('x-sentry-rate-limits', `${NOT_TAKEN_SECONDS}:${[...intake.notTaken].sort().join(';')}:key:unsupported`)
        return reply.code(200).send({ id: intake.eventId })
      },
    )
  }
}

function fromEnvelope(body: Buffer, receivedAt: number): SentryIntake {
  const envelope = parseEnvelope(body)
  const intake: SentryIntake = { eventId: typeof envelope.header.event_id === 'string' ? envelope.header.event_id : null, events: [], origins: [], notTaken: new Set() }
  envelope.items.forEach((item, index) => {
    const origin = `envelope item ${index} (${item.type})`
    if (item.type === 'client_report') return countClientReport(item.payload)
    if (item.type === 'session' || item.type === 'sessions') {
      for (const translated of translateSentrySessions(item.type, jsonObject(item.payload, origin), receivedAt)) {
        intake.events.push(translated)
        intake.origins.push(origin)
      }
      return
    }
    if (item.type !== 'event' && item.type !== 'transaction') {
      const category = CATEGORY_NOT_TAKEN[item.type]
      if (category) intake.notTaken.add(category)
      countSentryItemNotTaken(category ? item.type : 'other')
      return
    }
    const event = jsonObject(item.payload, origin)
    intake.eventId ??= typeof event.event_id === 'string' ? event.event_id : null
    const events = item.type === 'event' ? translateSentryEvent(event, receivedAt) : translateSentryTransaction(event, receivedAt)
    if (events.length === 0) throw new ProblemError(400, 'invalid_event', `${origin}: contexts.trace.trace_id is required for a transaction`)
    for (const translated of events) {
      intake.events.push(translated)
      intake.origins.push(origin)
    }
  })
  return intake
}

function fromEvent(event: Record<string, unknown>, receivedAt: number): SentryIntake {
  const events = translateSentryEvent(event, receivedAt)
  return { eventId: typeof event.event_id === 'string' ? event.event_id : null, events, origins: events.map(() => 'body'), notTaken: new Set() }
}

/** What an SDK says it discarded before sending (`discarded_events: [{ reason, category, quantity }]`), counted in the metrics. */
function countClientReport(payload: Buffer) {
  let report: unknown
  try {
    report = parseJsonBody(payload.toString('utf8'), 16)
  } catch {
    return
  }
  const discarded = isPlainObject(report) && Array.isArray(report.discarded_events) ? report.discarded_events : []
  const label = (value: unknown) => (typeof value === 'string' && /^[a-z_]{1,40}$/.test(value) ? value : 'other')
  for (const entry of discarded) {
    if (!isPlainObject(entry) || typeof entry.quantity !== 'number' || !(entry.quantity > 0) || !Number.isFinite(entry.quantity)) continue
    countSentryClientDiscarded(label(entry.reason), label(entry.category), entry.quantity)
  }
}

function jsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = parseJsonBody(bytes.toString('utf8'), 64)
  } catch (error) {
    // The parser names the whole body; an envelope's refusal names the item.
    if (error instanceof ProblemError && error.status === 400) throw new ProblemError(400, 'invalid_event', `${what}: ${error.detail.replace(/^body: /, '')}`)
    throw error
  }
  if (!isPlainObject(parsed)) throw new ProblemError(400, 'invalid_event', `${what}: must be a JSON object`)
  return parsed
}

/** Sentry SDKs read their back-off from X-Sentry-Rate-Limits: `seconds:categories:scope`, no categories meaning all. */
function withSentryRateLimits(problem: ProblemError) {
  problem.headers['x-sentry-rate-limits'] = `${problem.headers['retry-after'] ?? '1'}::key`
}
