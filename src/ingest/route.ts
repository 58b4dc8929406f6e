import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { PortalContext } from '../context.ts'
import type { Principal } from '../http/auth.ts'
import { parseJsonBody } from '../http/json-body.ts'
import { refuseWhenBacklogged } from '../http/load-shedding.ts'
import { ProblemError, problemErrorHandler, problemResponses } from '../http/problem.ts'
import { sha256Hex } from '../identity/secrets.ts'
import { newId } from '../ids.ts'
import { moduleByType, modules } from '../modules/registry.ts'
import type { AcceptedEvent } from '../modules/write-events.ts'
import { countIngestEvents } from '../metrics/metrics.ts'
import { createGroupCommitter } from '../storage/group-commit.ts'
import { findStoredResponse, idempotencyKeyOf, replay, type StoredResponse } from './idempotency.ts'
import { MAX_BATCHES_PER_TRANSACTION, writeIngestBatches, type IngestBatch } from './write-batches.ts'
import { RATE_HEADERS, admitToProject } from './rate-limit.ts'
import { verifyIngestSignature } from './signature.ts'
import { checkEvent, isPlainObject } from './validate-event.ts'

const EventSchema = Type.Union(
  modules.map((module) =>
    Type.Object({ type: Type.Literal(module.type), ts: Type.String({ format: 'date-time', description: 'ISO 8601 in UTC' }), data: module.payload }),
  ),
  { description: 'An event; `type` selects the module and the shape of `data`.' },
)

export const IngestResponse = Type.Object({
  accepted: Type.Integer({ description: 'events stored; they are committed before this answer' }),
  rejected: Type.Array(
    Type.Object({
      index: Type.Integer({ description: 'zero-based position in `events`' }),
      reason: Type.String({ description: 'the field and the problem, e.g. `data.actor: required`' }),
    }),
  ),
})

const EMPTY_BODY = Buffer.alloc(0)

export const ingestRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const maxBatchBytes = ctx.config.ingest.maxBatchBytes
  const handleError = problemErrorHandler(ctx.storage.isUnavailable)
  const committer = createGroupCommitter<IngestBatch, boolean>(
    ctx.storage,
    (trx, batches) => writeIngestBatches(trx, ctx, batches),
    MAX_BATCHES_PER_TRANSACTION,
    (batch) => batch.accepted.length,
    'ingest',
  )
  app.addHook('onClose', () => committer.close())

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
      onRequest: async (request) => refuseDeclaredOversize(request, maxBatchBytes),
      errorHandler: (error, request, reply) => {
        const oversize = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        return handleError.call(app, oversize ? batchTooLarge(maxBatchBytes) : error, request, reply)
      },
      schema: {
        tags: ['ingest'],
        summary: 'Ingest a signed batch of events',
        description:
          'Checks run in this order: 401 bearer, 413 size, 403 signature, 415 content type, 400 JSON and `events`, 429 rate, then each event. ' +
          'Malformed events are listed in `rejected`; the others are stored and committed before the 200. ' +
          '503 `overloaded` at any point while the portal sheds load: its event loop lags, or LOAD_SHED_MAX_PENDING_EVENTS events already wait for their commit.',
        security: [{ apiKey: [] }],
        headers: Type.Object({
          'x-service-signature': Type.String({ description: 'lower-case hex HMAC-SHA256 of the raw body, keyed with the API key’s webhook secret' }),
          'x-service-idempotency-key': Type.Optional(
            Type.String({ format: 'uuid', description: 'a repeat within 24 h returns the first response with `Idempotent-Replayed: true`' }),
          ),
        }),
        body: Type.Object({ events: Type.Array(EventSchema) }),
        response: {
          200: {
            description: 'Batch processed; accepted count and per-event rejections.',
            headers: { ...RATE_HEADERS, 'Idempotent-Replayed': { type: 'string', description: '`true` on a replayed response' } },
            content: { 'application/json': { schema: IngestResponse } },
          },
          ...problemResponses(400, 401, 403, 409, 413, 415, 422, 429, 503),
        },
      } as any,
    },
    async (request, reply) => {
      refuseWhenBacklogged(committer, ctx.config.loadShedding)
      const principal = request.principal as Extract<Principal, { kind: 'apiKey' }>
      const body = Buffer.isBuffer(request.body) ? request.body : EMPTY_BODY
      verifyIngestSignature(ctx, principal.webhookSecretEncrypted, request.headers['x-service-signature'], body)
      requireJsonContentType(request.headers['content-type'])
      const key = idempotencyKeyOf(request.headers['x-service-idempotency-key'])
      const events = parseEvents(body)
      const requestHash = key === undefined ? '' : sha256Hex(body)
      if (key !== undefined) {
        const stored = await findStoredResponse(ctx.storage.db, principal.projectId, key, requestHash)
        if (stored) return replay(reply, stored)
      }

      await admitToProject(ctx, principal, reply, events.length)

      const receivedAt = Date.now()
      const accepted: AcceptedEvent[] = []
      const rejected: { index: number; reason: string }[] = []
      events.forEach((raw, index) => {
        const checked = checkEvent(raw)
        if ('reason' in checked) return void rejected.push({ index, reason: checked.reason })
        const event = { id: newId('evt', receivedAt), projectId: principal.projectId, ts: checked.ts, receivedAt, data: checked.data }
        accepted.push({ module: checked.module, event, dataJson: checked.dataJson })
      })
      const response: StoredResponse = { statusCode: 200, body: JSON.stringify({ accepted: accepted.length, rejected }) }

      const stored = await committer.write({ projectId: principal.projectId, key, requestHash, response, accepted })
      if (!stored) {
        const first = await findStoredResponse(ctx.storage.db, principal.projectId, key!, requestHash)
        if (first) return replay(reply, first)
        throw new ProblemError(409, 'idempotency_key_in_flight', 'X-Service-Idempotency-Key: a request with this key is still being processed; retry')
      }
      countIngestEvents(accepted, rejected.map(({ index }) => moduleByType.get((events[index] as { type?: string } | null)?.type ?? '')?.type ?? 'unknown'))
      return reply.code(200).type('application/json').send(response.body)
    },
  )
}

function refuseDeclaredOversize(request: FastifyRequest, maxBatchBytes: number) {
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBatchBytes) throw batchTooLarge(maxBatchBytes)
}

function batchTooLarge(maxBatchBytes: number) {
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
