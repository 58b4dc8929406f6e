import { Type } from 'typebox'
import type { PortalContext } from '../context.ts'
import { dispatcherView } from './dispatcher.ts'
import { webhookDb } from './tables.ts'

const HOUR_MS = 3_600_000

/** Fields the webhooks module adds to `GET /api/webhooks/status` (scoped to the project when project_id is given). */
export const deliveryStatusFields = {
  queueDepth: Type.Integer({ description: 'pending deliveries: due, waiting for a retry, or in flight' }),
  oldestPendingAgeMs: Type.Union([Type.Integer(), Type.Null()], { description: 'age of the oldest pending delivery; null when none is pending' }),
  attemptsLastHour: Type.Integer({ description: 'finished attempts (not in_progress) started in the last hour' }),
  successRateLastHour: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'succeeded attempts / attempts over the last hour; null without attempts' }),
  dispatcher: Type.Object(
    {
      state: Type.Union([Type.Literal('running'), Type.Literal('stopping'), Type.Literal('stopped')]),
      instance: Type.Union([Type.String(), Type.Null()], { description: 'this portal process’s dispatcher id' }),
      inFlight: Type.Integer(),
      concurrency: Type.Integer({ description: 'WEBHOOK_CONCURRENCY' }),
      endpointConcurrency: Type.Integer({ description: 'WEBHOOK_ENDPOINT_CONCURRENCY' }),
    },
    { description: 'the dispatcher of the portal process that answered' },
  ),
}

export async function readDeliveryStatus(ctx: PortalContext, projectId: string | undefined) {
  const db = webhookDb(ctx.storage)
  const now = Date.now()
  let pending = db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<number>().as('depth'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
  let attempts = db
    .selectFrom('webhook_attempts')
    .select((eb) => [eb.fn.countAll<number>().as('total'), eb.fn.sum<number>(eb.case().when('status', '=', 'succeeded').then(1).else(0).end()).as('succeeded')])
    .where('started_at', '>=', now - HOUR_MS)
    .where('status', '!=', 'in_progress')
  if (projectId !== undefined) {
    pending = pending.where('project_id', '=', projectId)
    attempts = attempts.where('project_id', '=', projectId)
  }
  const [queue, lastHour] = await Promise.all([pending.executeTakeFirstOrThrow(), attempts.executeTakeFirstOrThrow()])
  const total = Number(lastHour.total)
  const dispatcher = dispatcherView(ctx)
  const { concurrency, endpointConcurrency } = ctx.config.webhooks
  return {
    queueDepth: Number(queue.depth),
    oldestPendingAgeMs: queue.oldest === null ? null : now - Number(queue.oldest),
    attemptsLastHour: total,
    successRateLastHour: total === 0 ? null : Number(lastHour.succeeded) / total,
    dispatcher: dispatcher ?? { state: 'stopped' as const, instance: null, inFlight: 0, concurrency, endpointConcurrency },
  }
}
