import { Type, type Static } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery, TimeRangeQuery, pageAfter, queryTime, toPage } from '../http/list.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { isoTime } from '../ids.ts'
import { findProject } from '../projects/store.ts'
import { wakeDispatcher } from './dispatcher.ts'
import { findEndpoint, liveProjectIds } from './endpoint-store.ts'
import { enqueueMessage, subscribedEndpointIds } from './enqueue.ts'
import { Attempt, DeliveryDetail, DeliveryStatusSchema, DeliverySummary, EnqueuedDelivery, EventTypeName } from './schemas.ts'
import { webhookDb, type WebhookTables } from './tables.ts'

const tags = ['webhooks']
const DeliveryParams = Type.Object({ id: Type.String({ description: 'the delivery id (dlv_…)' }) })
const RECOVER_LIMIT = 10_000

type DeliveryRow = WebhookTables['webhook_deliveries']

/** What a delivery row does not hold: its endpoint's URL and the latest attempt's HTTP status. */
interface DeliveryContext {
  endpointUrl: string
  lastStatusCode: number | null
}

function deliverySummary(row: DeliveryRow, context: DeliveryContext) {
  return {
    id: row.id,
    projectId: row.project_id,
    endpointId: row.endpoint_id,
    messageId: row.message_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    endpointUrl: context.endpointUrl,
    lastStatusCode: context.lastStatusCode,
    nextAttemptAt: isoTime(row.next_attempt_at),
    createdAt: isoTime(row.created_at)!,
    updatedAt: isoTime(row.updated_at)!,
  }
}

/** Deliver, the deliveries reads, and the two ways to send again: retry one delivery, recover an endpoint. */
export const deliveryRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = webhookDb(ctx.storage)
  const attempts = ctx.config.webhooks.retrySchedule.length + 1
  const parseTypes = (value: unknown) => ctx.storage.parseJson<string[]>(value)

  /** Each delivery's endpoint URL and latest attempt's status code: two reads for a whole page, never one per row. */
  async function contextsOf(rows: DeliveryRow[]): Promise<Map<string, DeliveryContext>> {
    const contexts = new Map<string, DeliveryContext>()
    if (rows.length === 0) return contexts
    const [endpoints, lastAttempts] = await Promise.all([
      db.selectFrom('webhook_endpoints').select(['id', 'url']).where('id', 'in', [...new Set(rows.map((row) => row.endpoint_id))]).execute(),
      db
        .selectFrom('webhook_attempts as attempt')
        .innerJoin('webhook_deliveries as delivery', 'delivery.id', 'attempt.delivery_id')
        .whereRef('attempt.number', '=', 'delivery.attempt_count')
        .where('attempt.delivery_id', 'in', rows.map((row) => row.id))
        .select(['attempt.delivery_id', ctx.storage.jsonText('attempt.response', 'statusCode').as('status_code')])
        .execute(),
    ])
    const urls = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint.url]))
    const codes = new Map(lastAttempts.map((attempt) => [attempt.delivery_id, attempt.status_code === null ? null : Number(attempt.status_code)]))
    for (const row of rows) contexts.set(row.id, { endpointUrl: urls.get(row.endpoint_id) ?? '', lastStatusCode: codes.get(row.id) ?? null })
    return contexts
  }

  /** A delivery of a live project of the organisation, or 404. */
  async function findDelivery(orgId: string, deliveryId: string): Promise<DeliveryRow> {
    const row = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).where('project_id', 'in', liveProjectIds(db, orgId)).executeTakeFirst()
    if (!row) throw new ProblemError(404, 'not_found', `delivery ${deliveryId} was not found`)
    return row
  }

  app.post(
    '/deliver',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        operationId: 'deliverWebhookMessage',
        summary: 'Enqueue a message for every enabled endpoint of the project that takes its event type, or for the endpoints named',
        description:
          'Answers 202 once the message and its deliveries are committed; attempts follow from the durable queue. ' +
          'With `endpointIds`, those endpoints get it whatever their event types; each must be an enabled endpoint of the project (else 422). ' +
          'Each attempt is a POST signed by Standard Webhooks (`webhook-id` = messageId on every attempt, `webhook-timestamp`, ' +
          '`webhook-signature: v1,<base64>`, one signature per live secret version). A 2xx succeeds; anything else, a timeout or a network error ' +
          'is retried after the next WEBHOOK_RETRY_SCHEDULE delay ±20% jitter, or after the endpoint’s Retry-After on a 429/503 when that is later ' +
          '(up to 24 h); redirects are not followed; a 410 fails the delivery and disables the endpoint.',
        body: Type.Object(
          {
            projectId: Type.String({ description: 'the project (prj_…)' }),
            eventType: EventTypeName(),
            payload: Type.Record(Type.String(), Type.Unknown(), { description: 'any JSON object; `data` of a generic body' }),
            endpointIds: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 100, uniqueItems: true, description: 'only these endpoints (whe_…), whatever their event types' })),
          },
          { additionalProperties: false, examples: [{ projectId: 'prj_01JD3Z8Q6R2N5M7K9P4TXYZABC', eventType: 'invoice.paid', payload: { invoiceId: 'inv_42', amount: 1200 } }] },
        ),
        response: {
          202: Type.Object({ messageId: Type.String({ description: 'msg_…, sent as `webhook-id`' }), deliveries: Type.Array(EnqueuedDelivery) }, { description: 'Enqueued: the message and its deliveries are committed.' }),
          ...problemResponses(400, 401, 403, 404, 415, 'endpoint_unavailable', 503),
        },
      },
    },
    async (request, reply) => {
      const { projectId, eventType, payload, endpointIds } = request.body
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const enqueued = await db.transaction().execute(async (trx) => {
        const targets = endpointIds ? await namedEnabledEndpoints(trx, projectId, endpointIds) : await subscribedEndpointIds(trx, projectId, eventType, parseTypes)
        return enqueueMessage(trx, { projectId, eventType, payload, endpointIds: targets, attempts })
      })
      wakeDispatcher(ctx)
      return reply.code(202).send(enqueued)
    },
  )

  /** The named endpoints, each an enabled endpoint of the project, else a 422 naming the first that is not. */
  async function namedEnabledEndpoints(trx: typeof db, projectId: string, endpointIds: string[]): Promise<string[]> {
    const found = await trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'enabled'])
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .where('id', 'in', endpointIds)
      .execute()
    const enabled = new Set(found.filter((row) => row.enabled === 1).map((row) => row.id))
    endpointIds.forEach((id, i) => {
      if (!enabled.has(id)) throw new ProblemError(422, 'endpoint_unavailable', `body.endpointIds.${i}: ${id} is not an enabled endpoint of project ${projectId}`)
    })
    return endpointIds
  }

  app.get(
    '/deliveries',
    {
      config: { access: 'read' },
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        description: 'Filter by endpoint, status and event type; `GET /api/webhooks/deliveries/{id}` has the attempts.',
        summary: 'A project’s deliveries, newest first (`from`/`to` on their creation); the detail read carries the attempts',
        querystring: Type.Object(
          {
            project_id: Type.String({ description: 'the project (prj_…)' }),
            endpoint_id: Type.Optional(Type.String({ description: 'only deliveries to this endpoint (whe_…)' })),
            status: Type.Optional(DeliveryStatusSchema),
            event_type: Type.Optional(Type.String({ description: 'only messages of this event type' })),
            ...TimeRangeQuery,
            ...PageQuery,
          },
          { additionalProperties: false },
        ),
        response: { 200: List(DeliverySummary), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { project_id: projectId, endpoint_id: endpointId, status, event_type: eventType, from, to, limit = DEFAULT_LIMIT, cursor } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      let query = db.selectFrom('webhook_deliveries').selectAll().where('project_id', '=', projectId)
      if (endpointId !== undefined) query = query.where('endpoint_id', '=', endpointId)
      if (status !== undefined) query = query.where('status', '=', status)
      if (eventType !== undefined) query = query.where('event_type', '=', eventType)
      const [fromMs, toMs] = [queryTime(from), queryTime(to)]
      if (fromMs !== undefined) query = query.where('created_at', '>=', fromMs)
      if (toMs !== undefined) query = query.where('created_at', '<', toMs)
      const rows = await pageAfter(query, cursor, limit, 'created_at', 'id').execute()
      const contexts = await contextsOf(rows.slice(0, limit))
      return toPage(rows, limit, (row) => [row.created_at, row.id], (row) => deliverySummary(row, contexts.get(row.id)!))
    },
  )

  app.get(
    '/deliveries/:id',
    {
      config: { access: 'read' },
      schema: {
        tags,
        operationId: 'getWebhookDelivery',
        description: 'Attempts made before a secret rotation stay inspectable: each names the secret version that signed it.',
        summary: 'A delivery with its payload and every attempt: request and response metadata, error, and the secret version that signed it',
        params: DeliveryParams,
        response: { 200: DeliveryDetail, ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const delivery = await findDelivery(accessPrincipal(request).orgId, request.params.id)
      const [message, attemptRows] = await Promise.all([
        db.selectFrom('webhook_messages').select('payload').where('id', '=', delivery.message_id).executeTakeFirstOrThrow(),
        db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', delivery.id).orderBy('number').execute(),
      ])
      return {
        ...deliverySummary(delivery, (await contextsOf([delivery])).get(delivery.id)!),
        payload: ctx.storage.parseJson<Record<string, unknown>>(message.payload),
        attempts: attemptRows.map((row) => ({
          id: row.id,
          number: row.number,
          status: row.status,
          startedAt: isoTime(row.started_at)!,
          durationMs: row.duration_ms,
          request: ctx.storage.parseJson<Static<typeof Attempt>['request']>(row.request),
          response: row.response === null ? null : ctx.storage.parseJson<Static<typeof Attempt>['response']>(row.response),
          error: row.error,
          secretId: row.secret_id,
        })),
      }
    },
  )

  app.post(
    '/deliveries/:id/retry',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        operationId: 'retryWebhookDelivery',
        description:
          'An ended delivery (failed or succeeded) gets one attempt more, now; a pending one gets its next scheduled attempt now instead of at `nextAttemptAt`. ' +
          '409 `endpoint_disabled` when its endpoint is disabled or deleted.',
        summary: 'Send a delivery now: the same webhook-id, the next attempt number',
        params: DeliveryParams,
        response: { 202: DeliverySummary, ...problemResponses(401, 403, 404, 'endpoint_disabled', 503) },
      },
    },
    async (request, reply) => {
      const delivery = await findDelivery(accessPrincipal(request).orgId, request.params.id)
      const endpoint = await db.selectFrom('webhook_endpoints').select('enabled').where('id', '=', delivery.endpoint_id).where('deleted_at', 'is', null).executeTakeFirst()
      if (endpoint?.enabled !== 1) throw new ProblemError(409, 'endpoint_disabled', `endpoint ${delivery.endpoint_id} is disabled or deleted; enable it first`)
      const retried = delivery.status === 'pending' ? await hurry(db, [delivery.id]) : await sendAgain(db, [delivery.id])
      wakeDispatcher(ctx)
      const row = { ...delivery, ...retried }
      return reply.code(202).send(deliverySummary(row, (await contextsOf([row])).get(row.id)!))
    },
  )

  app.post(
    '/endpoints/:id/recover',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        operationId: 'recoverWebhookEndpoint',
        description:
          'For an endpoint that was down: its failed deliveries since then are sent again, once each, and its pending ones get their next attempt now. 409 `endpoint_disabled` while it is disabled.',
        summary: 'Send now every failed or pending delivery of the endpoint created at or after `since`',
        params: Type.Object({ id: Type.String({ description: 'the endpoint id (whe_…)' }) }),
        body: Type.Object({ since: Type.String({ format: 'date-time', description: 'ISO 8601' }) }, { additionalProperties: false }),
        response: { 202: Type.Object({ deliveries: Type.Array(EnqueuedDelivery) }, { description: 'The deliveries enqueued again.' }), ...problemResponses(400, 401, 403, 404, 'endpoint_disabled', 415, 503) },
      },
    },
    async (request, reply) => {
      const endpoint = await findEndpoint(db, accessPrincipal(request).orgId, request.params.id)
      if (endpoint.enabled !== 1) throw new ProblemError(409, 'endpoint_disabled', `endpoint ${endpoint.id} is disabled; enable it first`)
      const ended = await db
        .selectFrom('webhook_deliveries')
        .select(['id', 'status'])
        .where('endpoint_id', '=', endpoint.id)
        .where('status', 'in', ['failed', 'pending'])
        .where('created_at', '>=', Date.parse(request.body.since))
        .orderBy('created_at')
        .limit(RECOVER_LIMIT)
        .execute()
      const ids = ended.map((row) => row.id)
      const failed = ended.filter((row) => row.status === 'failed').map((row) => row.id)
      if (failed.length > 0) await sendAgain(db, failed)
      const pending = ended.filter((row) => row.status === 'pending').map((row) => row.id)
      if (pending.length > 0) await hurry(db, pending)
      wakeDispatcher(ctx)
      return reply.code(202).send({ deliveries: ids.map((id) => ({ id, endpointId: endpoint.id, status: 'pending' as const })) })
    },
  )
}

/**
 * Brings the next scheduled attempt of pending deliveries forward to now, one row a statement: the dispatcher
 * claims these rows meanwhile, and a statement holding many of them could deadlock with its claim on PostgreSQL.
 */
async function hurry(db: ReturnType<typeof webhookDb>, deliveryIds: string[]) {
  const now = Date.now()
  for (const id of deliveryIds) {
    await db.updateTable('webhook_deliveries').set({ next_attempt_at: now, updated_at: now }).where('id', '=', id).where('status', '=', 'pending').execute()
  }
}

/** Makes ended deliveries pending again with exactly one more attempt, due now. */
async function sendAgain(db: ReturnType<typeof webhookDb>, deliveryIds: string[]) {
  const now = Date.now()
  const changes = { status: 'pending' as const, next_attempt_at: now, updated_at: now }
  for (let start = 0; start < deliveryIds.length; start += 500) {
    await db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ ...changes, final_attempt: eb('attempt_count', '+', 1) }))
      .where('id', 'in', deliveryIds.slice(start, start + 500))
      .where('status', '!=', 'pending')
      .execute()
  }
  return changes
}
