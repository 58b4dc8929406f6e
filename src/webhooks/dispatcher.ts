import { sql, type Kysely } from 'kysely'
import type { PortalContext } from '../context.ts'
import { newId } from '../ids.ts'
import { createDeliveryAgent } from './address-guard.ts'
import { disableEndpoint, signingSecrets, type SigningSecret } from './endpoint-store.ts'
import { renderBody } from './render.ts'
import { sendAttempt, type AttemptResult } from './send-attempt.ts'
import { standardWebhookSignature } from './signing.ts'
import type { DeliveryStatus, DisabledReason, EndpointKind, WebhookDb, WebhookTables } from './tables.ts'
import { webhookDb } from './tables.ts'

// A lease outlives the longest attempt by this much; only a crashed instance's deliveries wait for it to run out.
const LEASE_MARGIN_MS = 30_000
const IDLE_POLL_MS = 200
const ERROR_BACKOFF_MS = 1_000
// A receiver's Retry-After is honoured up to a day; beyond that the schedule's own delay applies.
const MAX_RETRY_AFTER_MS = 86_400_000
const JITTER = 0.2

type DispatcherState = 'running' | 'stopping' | 'stopped'

interface DispatcherView {
  state: DispatcherState
  instance: string
  inFlight: number
  concurrency: number
  endpointConcurrency: number
}

/** A delivery this instance holds the lease of, with all its attempt needs. */
interface ClaimedDelivery {
  id: string
  projectId: string
  endpointId: string
  messageId: string
  eventType: string
  number: number
  finalAttempt: number
  url: string
  kind: EndpointKind
  payload: Record<string, unknown>
  messageCreatedAt: number
  secrets: SigningSecret[]
}

interface Outcome {
  delivery: ClaimedDelivery
  result: AttemptResult
}

// Keyed by context: one process may run several portals (tests start two on one database).
const dispatchers = new WeakMap<PortalContext, { view(): DispatcherView; wake(): void }>()

/** The dispatcher state of the portal that owns `ctx`, for its status read. */
export function dispatcherView(ctx: PortalContext): DispatcherView | undefined {
  return dispatchers.get(ctx)?.view()
}

/** Tells the dispatcher new deliveries are committed, so they start now rather than at the next poll. */
export function wakeDispatcher(ctx: PortalContext): void {
  dispatchers.get(ctx)?.wake()
}

/**
 * Runs due attempts from the delivery table. Each cycle is one transaction that records the attempts
 * finished since the last cycle and claims due deliveries under a lease (rows locked with SKIP LOCKED on
 * PostgreSQL, so instances sharing the database claim disjoint deliveries): one commit for many
 * attempts is what lets SQLite keep up. Sends run with bounded concurrency overall and per endpoint.
 * Returns how to stop it.
 */
export async function startDispatcher(ctx: PortalContext): Promise<() => Promise<void>> {
  const { concurrency, endpointConcurrency, timeoutMs, allowPrivateNetworks } = ctx.config.webhooks
  const db = webhookDb(ctx.storage)
  const instance = newId('dsp')
  const agent = createDeliveryAgent({ allowPrivateNetworks, timeoutMs, connections: concurrency })
  const inFlightByEndpoint = new Map<string, number>()
  const sending = new Set<Promise<void>>()
  const finished: Outcome[] = []
  let state: DispatcherState = 'running'
  let timer: NodeJS.Timeout | undefined
  let scheduled: NodeJS.Immediate | undefined
  let cycling: Promise<void> | null = null
  let wakeRequested = false

  dispatchers.set(ctx, { view: () => ({ state, instance, inFlight: sending.size, concurrency, endpointConcurrency }), wake })

  function wake() {
    if (state === 'stopped') return
    if (cycling) {
      wakeRequested = true
      return
    }
    if (scheduled) return
    clearTimeout(timer)
    // After this turn's I/O: every answer that arrived meanwhile joins the same cycle and commit.
    scheduled = setImmediate(startCycle)
  }

  function startCycle() {
    scheduled = undefined
    cycling = cycle().then((delay) => {
      cycling = null
      if (wakeRequested || (finished.length > 0 && delay === 0)) {
        wakeRequested = false
        return wake()
      }
      if (state === 'running') timer = setTimeout(wake, finished.length > 0 ? delay : Math.max(delay, IDLE_POLL_MS))
    })
  }

  /** One transaction: record finished attempts, claim due deliveries. Returns the delay before the next cycle. */
  async function cycle(): Promise<number> {
    const outcomes = finished.splice(0)
    const free = state === 'running' ? concurrency - sending.size : 0
    try {
      const { claimed, nextAttempts } = await db.transaction().execute(async (trx) => ({
        nextAttempts: outcomes.length > 0 ? await recordOutcomes(ctx, trx, instance, outcomes) : [],
        claimed: free > 0 ? await claimDue(ctx, trx, instance, free, inFlightByEndpoint) : [],
      }))
      for (const delivery of claimed) launch(delivery)
      // Retries sooner than the next poll get a timer of their own, so short schedules keep their pace.
      for (const at of nextAttempts) if (at !== null && at - Date.now() < IDLE_POLL_MS) setTimeout(wake, Math.max(0, at - Date.now())).unref()
      return 0
    } catch (error) {
      // Unrecorded attempts wait for the next cycle; their leases keep other instances from repeating them.
      finished.unshift(...outcomes)
      ctx.log.warn({ err: error }, 'webhook dispatcher cycle failed; retrying')
      return ERROR_BACKOFF_MS
    }
  }

  function launch(delivery: ClaimedDelivery) {
    inFlightByEndpoint.set(delivery.endpointId, (inFlightByEndpoint.get(delivery.endpointId) ?? 0) + 1)
    const attempt = runAttempt(delivery)
      .then((result) => {
        finished.push({ delivery, result })
      })
      .finally(() => {
        sending.delete(attempt)
        const left = (inFlightByEndpoint.get(delivery.endpointId) ?? 1) - 1
        if (left === 0) inFlightByEndpoint.delete(delivery.endpointId)
        else inFlightByEndpoint.set(delivery.endpointId, left)
        wake()
      })
    sending.add(attempt)
  }

  async function runAttempt(delivery: ClaimedDelivery): Promise<AttemptResult> {
    const body = renderBody(delivery.kind, { id: delivery.messageId, eventType: delivery.eventType, createdAt: delivery.messageCreatedAt, payload: delivery.payload })
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = {
      'webhook-id': delivery.messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardWebhookSignature(delivery.secrets.map((s) => s.secret), delivery.messageId, timestamp, body),
    }
    return sendAttempt(agent, delivery.url, headers, body, timeoutMs)
  }

  wake()
  return async () => {
    state = 'stopping'
    clearTimeout(timer)
    await Promise.allSettled([...sending])
    while (cycling || scheduled) {
      clearImmediate(scheduled)
      scheduled = undefined
      await cycling
    }
    // The last attempts are recorded before the database closes; nothing new is claimed.
    if (finished.length > 0) await cycle()
    state = 'stopped'
    clearTimeout(timer)
    await agent.close()
  }
}

/** Takes the lease of up to `free` due deliveries, leaving endpoints already at their concurrency bound to wait. */
async function claimDue(ctx: PortalContext, trx: WebhookDb, instance: string, free: number, inFlightByEndpoint: Map<string, number>): Promise<ClaimedDelivery[]> {
  const { endpointConcurrency, timeoutMs } = ctx.config.webhooks
  const now = Date.now()
  const saturated = [...inFlightByEndpoint].filter(([, count]) => count >= endpointConcurrency).map(([id]) => id)
  let due = trx
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<', now)]))
    .where('endpoint_id', 'in', trx.selectFrom('webhook_endpoints').select('id').where('enabled', '=', 1).where('deleted_at', 'is', null))
    .orderBy('next_attempt_at')
    .limit(free * 4)
  if (saturated.length > 0) due = due.where('endpoint_id', 'not in', saturated)
  const candidates = await ctx.storage.forUpdateSkipLocked(due).execute()
  const picked = pickWithinEndpointBounds(candidates, free, endpointConcurrency, inFlightByEndpoint)
  if (picked.length === 0) return []
  await trx.updateTable('webhook_deliveries').set({ lease: instance, leased_until: now + timeoutMs + LEASE_MARGIN_MS }).where('id', 'in', picked).execute()
  const rows = await trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.id', 'd.project_id', 'd.endpoint_id', 'd.message_id', 'd.event_type', 'd.attempt_count', 'd.final_attempt', 'e.url', 'e.kind', 'm.payload', 'm.created_at'])
    .where('d.id', 'in', picked)
    .execute()
  const secrets = await signingSecrets(trx, ctx.secretBox, [...new Set(rows.map((row) => row.endpoint_id))], now)
  return rows.map((row) => ({
    id: row.id,
    projectId: row.project_id,
    endpointId: row.endpoint_id,
    messageId: row.message_id,
    eventType: row.event_type,
    number: row.attempt_count + 1,
    finalAttempt: row.final_attempt,
    url: row.url,
    kind: row.kind,
    payload: ctx.storage.parseJson<Record<string, unknown>>(row.payload),
    messageCreatedAt: row.created_at,
    secrets: secrets.get(row.endpoint_id) ?? [],
  }))
}

function pickWithinEndpointBounds(candidates: { id: string; endpoint_id: string }[], free: number, bound: number, inFlightByEndpoint: Map<string, number>): string[] {
  const taken = new Map(inFlightByEndpoint)
  const picked: string[] = []
  for (const candidate of candidates) {
    if (picked.length === free) break
    const count = taken.get(candidate.endpoint_id) ?? 0
    if (count >= bound) continue
    taken.set(candidate.endpoint_id, count + 1)
    picked.push(candidate.id)
  }
  return picked
}

/**
 * What follows an attempt: the delivery's next status and when its next attempt is due — the schedule's
 * delay with jitter, or the endpoint's Retry-After when that is later.
 */
function nextStep(delivery: ClaimedDelivery, result: AttemptResult, schedule: number[]): { status: DeliveryStatus; nextAttemptAt: number | null } {
  if (result.status === 'succeeded') return { status: 'succeeded', nextAttemptAt: null }
  if (result.response?.statusCode === 410 || delivery.number >= delivery.finalAttempt) return { status: 'failed', nextAttemptAt: null }
  const scheduled = schedule[Math.min(delivery.number - 1, schedule.length - 1)] * 1000 * (1 - JITTER + Math.random() * 2 * JITTER)
  const retryAfter = Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)
  return { status: 'pending', nextAttemptAt: result.startedAt + result.durationMs + Math.round(Math.max(scheduled, retryAfter)) }
}

/**
 * Records a batch of finished attempts, moves each delivery on, and keeps endpoint health: a 410 disables at once, failing
 * for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS disables too; both are announced as endpoint.disabled.
 */
async function recordOutcomes(ctx: PortalContext, trx: WebhookDb, instance: string, batch: Outcome[]): Promise<(number | null)[]> {
  const { retrySchedule, disableAfterFailingSeconds } = ctx.config.webhooks
  const now = Date.now()
  await trx
    .insertInto('webhook_attempts')
    .values(batch.map(attemptRow))
    .onConflict((conflict) => conflict.columns(['delivery_id', 'number']).doNothing())
    .execute()
  const steps = batch.map(({ delivery, result }) => nextStep(delivery, result, retrySchedule))
  await endSucceeded(trx, instance, batch.filter((_, i) => steps[i].status === 'succeeded').map((o) => o.delivery.id), now)
  for (const [i, { delivery }] of batch.entries()) if (steps[i].status !== 'succeeded') await moveFailedDelivery(trx, instance, delivery, steps[i], now)
  const succeeded = new Set(batch.filter((o) => o.result.status === 'succeeded').map((o) => o.delivery.endpointId))
  const failedSince = new Map<string, number>()
  for (const { delivery, result } of batch) {
    if (result.status === 'succeeded' || succeeded.has(delivery.endpointId)) continue
    failedSince.set(delivery.endpointId, Math.min(failedSince.get(delivery.endpointId) ?? result.startedAt, result.startedAt))
  }
  if (succeeded.size > 0) {
    await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', 'in', [...succeeded]).where('failing_since', 'is not', null).execute()
  }
  for (const [endpointId, since] of failedSince) {
    await trx.updateTable('webhook_endpoints').set({ failing_since: since }).where('id', '=', endpointId).where('failing_since', 'is', null).execute()
  }
  const toDisable = new Map<string, DisabledReason>()
  for (const { delivery, result } of batch) if (result.response?.statusCode === 410) toDisable.set(delivery.endpointId, 'gone')
  if (failedSince.size > 0) {
    const longFailing = await trx
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('id', 'in', [...failedSince.keys()])
      .where('enabled', '=', 1)
      .where('failing_since', '<=', now - disableAfterFailingSeconds * 1000)
      .execute()
    for (const { id } of longFailing) if (!toDisable.has(id)) toDisable.set(id, 'failing')
  }
  for (const [endpointId, reason] of toDisable) await disableAndAnnounce(ctx, trx, endpointId, reason, now)
  return steps.map((step) => step.nextAttemptAt)
}

function attemptRow({ delivery, result }: Outcome): WebhookTables['webhook_attempts'] {
  return {
    id: newId('att', result.startedAt),
    delivery_id: delivery.id,
    project_id: delivery.projectId,
    endpoint_id: delivery.endpointId,
    number: delivery.number,
    status: result.status,
    started_at: result.startedAt,
    duration_ms: result.durationMs,
    request: JSON.stringify(result.request),
    response: result.response === null ? null : JSON.stringify(result.response),
    error: result.error,
    secret_id: delivery.secrets[0]?.id ?? null,
  }
}

// Deliveries are moved on only while this instance still holds the lease of the attempt it records.

/** Succeeded deliveries, in one statement: the common case under load. A success wins over a disabling meanwhile. */
async function endSucceeded(trx: WebhookDb, instance: string, deliveryIds: string[], now: number) {
  if (deliveryIds.length === 0) return
  await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({ status: 'succeeded', next_attempt_at: null, attempt_count: eb('attempt_count', '+', 1), lease: null, leased_until: null, updated_at: now }))
    .where('id', 'in', deliveryIds)
    .where('lease', '=', instance)
    .execute()
}

/** A failed attempt: the next one is scheduled, or the delivery fails; one failed meanwhile by its endpoint's disabling stays failed. */
async function moveFailedDelivery(trx: WebhookDb, instance: string, delivery: ClaimedDelivery, step: { status: DeliveryStatus; nextAttemptAt: number | null }, now: number) {
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: sql<DeliveryStatus>`case when status = 'pending' then ${step.status} else status end`,
      next_attempt_at: sql<number | null>`case when status = 'pending' then cast(${step.nextAttemptAt} as bigint) else null end`,
      attempt_count: delivery.number,
      lease: null,
      leased_until: null,
      updated_at: now,
    })
    .where('id', '=', delivery.id)
    .where('lease', '=', instance)
    .execute()
}

async function disableAndAnnounce(ctx: PortalContext, trx: Kysely<any>, endpointId: string, reason: DisabledReason, now: number) {
  if (!(await disableEndpoint(trx, endpointId, reason, now))) return
  const endpoint = await (trx as Kysely<WebhookTables>).selectFrom('webhook_endpoints').select(['project_id', 'url']).where('id', '=', endpointId).executeTakeFirstOrThrow()
  const detail = reason === 'gone' ? 'the endpoint answered 410 Gone' : `every attempt failed for ${ctx.config.webhooks.disableAfterFailingSeconds} s`
  await ctx.notifications.publish(trx, endpoint.project_id, 'endpoint.disabled', {
    endpointId,
    url: endpoint.url,
    reason,
    detail,
    disabledAt: new Date(now).toISOString(),
  })
}
