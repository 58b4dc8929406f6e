import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PortalContext } from '../context.ts'
import { parseJsonBody } from '../http/json-body.ts'
import { ProblemError, problemErrorHandler, problemResponses } from '../http/problem.ts'
import { modules, eventTypes } from '../modules/registry.ts'
import { named, pascalCase } from '../http/openapi-components.ts'
import { exampleOf } from '../http/schema-example.ts'
import { IDEMPOTENT_REPLAYED, findStoredResponse, idempotencyKeyOf, isUuid, replay, type StoredResponse } from './idempotency.ts'
import type { ApiKeyPrincipal, IngestPipeline } from './pipeline.ts'
import { bucketEmpty, RATE_HEADERS, refuseWhileBucketEmpty } from './rate-limit.ts'
import { verifyIngestSignature } from './signature.ts'
import { isPlainObject } from './validate-event.ts'

/**
 * An event as the server takes it: any object. Each is checked on its own and a malformed one is
 * listed in `rejected` with the batch still answered 200, so the document must not make it invalid
 * (a validating gateway would refuse the whole batch); the payload shapes are named components instead.
 */
const IngestEvent = named(
  'IngestEvent',
  Type.Object(
    {
      type: Type.String({ description: `the event type, one of ${eventTypes.map((type) => `\`${type}\``).join(', ')}; it selects the module and the shape of \`data\``, examples: ['log'] }),
      ts: Type.String({ description: 'when it happened: ISO 8601 in UTC (`2026-11-23T18:30:00.000Z`)', examples: ['2026-11-23T18:30:00.000Z'] }),
      data: Type.Object(
        {},
        {
          additionalProperties: true,
          description: `the payload: ${modules.map((module) => `\`${module.type}\` → \`${pascalCase(module.type)}Payload\``).join(', ')}`,
          examples: [{ level: 'error', message: 'payment declined for order 1042' }],
        },
      ),
    },
    {
      additionalProperties: true,
      description:
        'One event. An event whose `type`, `ts` or `data` is wrong (per the payload component of its type) is listed in `rejected`; the others are stored.',
    },
  ),
)

const IngestRequest = named(
  'IngestRequest',
  Type.Object(
    { events: Type.Array(IngestEvent, { description: 'the batch; each event is checked on its own' }) },
    {
      description: 'A batch of events. Not an object with an `events` array: 400 `missing_events`.',
      examples: [{ events: modules.slice(0, 3).map((module) => ({ type: module.type, ts: '2026-11-23T18:30:00.000Z', data: exampleOf(module.payload) })) }],
    },
  ),
)

export const IngestResponse = named(
  'IngestResponse',
  Type.Object(
    {
      accepted: Type.Integer({ description: 'events stored; they are committed before this answer' }),
      rejected: Type.Array(
        named(
          'RejectedEvent',
          Type.Object(
            {
              index: Type.Integer({ description: 'zero-based position in `events`' }),
              reason: Type.String({ description: 'the field and the problem, e.g. `data.actor: required`' }),
            },
            { description: 'An event that was not stored, and why.' },
          ),
        ),
        { description: 'the events not stored, in batch order' },
      ),
    },
    { description: 'What happened to each event of the batch.', examples: [{ accepted: 2, rejected: [{ index: 1, reason: 'data.actor: required' }] }] },
  ),
)

const EMPTY_BODY = Buffer.alloc(0)

/** A body this large takes long enough to parse (5 MB: 50–200 ms) that parsing two at once would keep other requests waiting. */
const LARGE_BODY_BYTES = 256 * 1024
let parseTurns: Promise<unknown> = Promise.resolve()

/**
 * Runs `parse` once the large bodies before it are parsed, each in a macrotask of its own: between two, health and
 * small requests get the event loop, so that twenty 5 MB batches arriving at once delay them by one parse, not twenty.
 * The turn also looks at the bucket again, which the batch admitted before it may have emptied.
 */
function inParseTurn<T>(parse: () => T): Promise<T> {
  const turn = parseTurns.then(() => new Promise((resolve) => setImmediate(resolve))).then(parse)
  parseTurns = turn.catch(() => {})
  return turn
}

export const ingestRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext; pipeline: IngestPipeline }> = async (app, { ctx, pipeline }) => {
  const maxBatchBytes = ctx.config.ingest.maxBatchBytes
  const handleError = problemErrorHandler(ctx.storage.isUnavailable)

  // The body is read as bytes: the signature covers the exact bytes, and the checks must run in DESIGN's order.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBatchBytes }, (_request, body, done) => done(null, body))

  app.post(
    '/api/ingest',
    {
      config: { access: 'apiKey' },
      bodyLimit: maxBatchBytes,
      // Documentation only: malformed events are reported in `rejected` with 200, never as a schema 400.
      validatorCompiler: () => () => true,
      onRequest: async (request, reply) => {
        refuseDeclaredOversize(request, maxBatchBytes)
        const { projectId } = request.principal as ApiKeyPrincipal
        if (!bucketEmpty(projectId)) return
        // A repeat of an answered request is replayed whatever the bucket holds (spec 4.1 rule 2): the handler does.
        const header = request.headers['x-service-idempotency-key']
        const key = typeof header === 'string' && isUuid(header) ? header.toLowerCase() : undefined
        if (key !== undefined && (await findStoredResponse(ctx.storage.db, projectId, key))) return
        refuseWhileBucketEmpty(projectId, reply)
      },
      errorHandler: (error, request, reply) => {
        const oversize = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        return handleError.call(app, oversize ? batchTooLarge(maxBatchBytes) : error, request, reply)
      },
      schema: {
        operationId: 'ingestEvents',
        tags: ['ingest'],
        summary: 'Ingest a signed batch of events',
        description:
          'Checks run in this order: 401 bearer, 413 size, 403 signature, 415 content type, 400 JSON and `events`, 429 rate, then each event. ' +
          'While a refusal has left the project’s bucket empty, a batch is answered 429 from its headers, before its body is read (any batch with an event would be refused). ' +
          'Malformed events are listed in `rejected`; the others are stored and committed before the 200. ' +
          '503 `overloaded` at any point while the portal sheds load: its event loop lags, or LOAD_SHED_MAX_PENDING_EVENTS events already wait for their commit.',
        security: [{ apiKey: [] }],
        headers: Type.Object({
          'x-service-signature': Type.String({ examples: ['9c4f2b0e4d1a7c3e8b5f6a2d9e0c1b4a7f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c'], description: 'lower-case hex HMAC-SHA256 of the raw body, keyed with the API key’s webhook secret' }),
          'x-service-idempotency-key': Type.Optional(
            Type.String({ format: 'uuid', description: 'a repeat within 24 h returns the first response with `Idempotent-Replayed: true`' }),
          ),
        }),
        body: IngestRequest,
        response: {
          200: {
            description: 'Batch processed; accepted count and per-event rejections.',
            headers: { ...RATE_HEADERS, ...IDEMPOTENT_REPLAYED },
            content: { 'application/json': { schema: IngestResponse } },
          },
          ...problemResponses(
            'invalid_idempotency_key',
            'missing_events',
            401,
            'missing_signature',
            'invalid_signature',
            'idempotency_key_in_flight',
            'batch_too_large',
            415,
            429,
            503,
          ),
        },
      },
    },
    // An untyped reply: the answer goes out as the JSON text stored for replays; the schema's 200 documents it.
    async (request, reply: FastifyReply) => {
      pipeline.refuseWhenBacklogged()
      const principal = request.principal as ApiKeyPrincipal
      const body = Buffer.isBuffer(request.body) ? request.body : EMPTY_BODY
      verifyIngestSignature(ctx, principal.webhookSecretEncrypted, request.headers['x-service-signature'], body)
      requireJsonContentType(request.headers['content-type'])
      const key = idempotencyKeyOf(request.headers['x-service-idempotency-key'])
      // Spec 4.1 rule 2: a repeat is answered before its body is looked at, whatever it carries.
      if (key !== undefined) {
        const stored = await findStoredResponse(ctx.storage.db, principal.projectId, key)
        if (stored) return replay(reply, stored)
      }
      // Again, past the replay: a batch admitted while this one's body arrived may have emptied the bucket, and parsing is the cost.
      refuseWhileBucketEmpty(principal.projectId, reply)
      const events = body.length < LARGE_BODY_BYTES ? parseEvents(body) : await inParseTurn(() => (refuseWhileBucketEmpty(principal.projectId, reply), parseEvents(body)))

      await pipeline.admit(principal, reply, events.length)

      const { accepted, rejected } = await pipeline.check(principal.projectId, events, Date.now())
      const response: StoredResponse = { statusCode: 200, body: JSON.stringify({ accepted: accepted.length, rejected }) }

      const stored = await pipeline.commit({ projectId: principal.projectId, key, response, accepted })
      if (!stored) {
        const first = await findStoredResponse(ctx.storage.db, principal.projectId, key!)
        if (first) return replay(reply, first)
        throw new ProblemError(409, 'idempotency_key_in_flight', 'X-Service-Idempotency-Key: a request with this key is still being processed; retry')
      }
      return reply.code(200).type('application/json').send(response.body)
    },
  )
}

export function refuseDeclaredOversize(request: FastifyRequest, maxBatchBytes: number) {
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBatchBytes) throw batchTooLarge(maxBatchBytes)
}

export function batchTooLarge(maxBatchBytes: number) {
  return new ProblemError(413, 'batch_too_large', `the batch is larger than ${maxBatchBytes} bytes; split it into smaller batches`)
}

function requireJsonContentType(contentType: string | undefined) {
  const mediaType = contentType?.split(';')[0].trim().toLowerCase()
  if (mediaType !== 'application/json') {
    throw new ProblemError(415, 'unsupported_media_type', 'Content-Type: must be application/json')
  }
}

function parseEvents(body: Buffer): unknown[] {
  const envelope = parseJsonBody(body.toString('utf8'))
  if (!isPlainObject(envelope) || !Array.isArray(envelope.events)) {
    throw new ProblemError(400, 'missing_events', 'events: required, an array of events')
  }
  return envelope.events
}
