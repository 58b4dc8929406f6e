import { sql } from 'kysely'
import type { PortalContext } from '../context.ts'
import { newId } from '../ids.ts'
import { countWebhookAttempts } from '../metrics/metrics.ts'
import { disableEndpoint, signingSecrets } from './endpoint-store.ts'
import { renderBody } from './render.ts'
import { prepareRequest, type AttemptResult, type PreparedRequest } from './attempt-request.ts'
import { standardWebhookSignature } from './signing.ts'
import type { AttemptStatus, DeliveryStatus, DisabledReason, WebhookDb, WebhookTables } from './tables.ts'
import { webhookDb } from './tables.ts'
import { tablesOf, type Connection } from '../storage/tables.ts'

// A lease outlives the longest attempt by this much; only a crashed instance's deliveries wait for it to run out.
const LEASE_MARGIN_MS = 30_000
// Deliveries another instance enqueued, or that wait for a busy endpoint, are found by this poll at the latest;
// retries are not: every cycle wakes at the next due time it reads.
const IDLE_POLL_MS = 200
const ERROR_BACKOFF_MS = 1_000
const MAX_ENDPOINTS_PER_CLAIM = 1_000
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
  secretId: string | null
  request: PreparedRequest
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
  // undici, loaded here rather than with the module: the ingest writer's thread, which loads the registry, does not send
  const [{ createDeliveryAgent }, { sendAttempt }] = await Promise.all([import('./address-guard.ts'), import('./send-attempt.ts')])
  const agent = createDeliveryAgent({ allowPrivateNetworks, timeoutMs, connections: concurrency })
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
    cycling = cycle().then(({ failed, delay }) => {
      cycling = null
      if (wakeRequested || (finished.length > 0 && !failed)) {
        wakeRequested = false
        return wake()
      }
      if (state === 'running') timer = setTimeout(wake, delay)
    })
  }

  /** One transaction: record finished attempts, claim due deliveries. Returns whether it failed and the delay before the next cycle. */
  async function cycle(): Promise<{ failed: boolean; delay: number }> {
    const outcomes = finished.splice(0)
    const free = state === 'running' ? concurrency - sending.size : 0
    try {
      const { claimed, nextDueAt } = await db.transaction().execute(async (trx) => {
        if (outcomes.length > 0) await recordOutcomes(ctx, trx, instance, outcomes)
        // Counted before the commit, so that a reader who sees the outcome sees it counted.
        countWebhookAttempts(outcomes.map(({ result }) => result.status))
        return { claimed: free > 0 ? await claimDue(ctx, trx, instance, free) : [], nextDueAt: await nextDue(trx) }
      })
      for (const delivery of claimed) launch(delivery)
      // Waking at the next due time keeps retries on schedule; the poll still finds what was due but not taken.
      return { failed: false, delay: nextDueAt === null ? IDLE_POLL_MS : Math.min(IDLE_POLL_MS, Math.max(0, nextDueAt - Date.now())) }
    } catch (error) {
      // Unrecorded attempts wait for the next cycle; their leases keep other instances from repeating them.
      finished.unshift(...outcomes)
      ctx.log.warn({ err: error }, 'webhook dispatcher cycle failed; retrying')
      return { failed: true, delay: ERROR_BACKOFF_MS }
    }
  }

  function launch(delivery: ClaimedDelivery) {
    const attempt = sendAttempt(agent, delivery.request, timeoutMs)
      .then((result) => {
        finished.push({ delivery, result })
      })
      .finally(() => {
        sending.delete(attempt)
        wake()
      })
    sending.add(attempt)
  }

  wake()
  return async () => {
    state = 'stopping'
    clearTimeout(timer)
    // A cycle that began before the stop may still launch what it claimed: those attempts are awaited too,
    // or their deliveries would keep a lease nobody records, and wait it out (timeout + 30 s) after a restart.
    while (cycling || scheduled || sending.size > 0) {
      clearImmediate(scheduled)
      scheduled = undefined
      await cycling
      await Promise.allSettled([...sending])
    }
    // The last attempts are recorded before the database closes; nothing new is claimed.
    if (finished.length > 0) await cycle()
    state = 'stopped'
    clearTimeout(timer)
    await agent.close()
  }
}

/**
 * Takes the lease of up to `free` due deliveries and records each attempt as in_progress before its request
 * leaves. The bound per endpoint counts every instance's live leases, read while holding the endpoint's row,
 * so WEBHOOK_ENDPOINT_CONCURRENCY holds for the whole deployment, not per process.
 */
async function claimDue(ctx: PortalContext, trx: WebhookDb, instance: string, free: number): Promise<ClaimedDelivery[]> {
  const { endpointConcurrency, timeoutMs } = ctx.config.webhooks
  const dueBy = (now: number) =>
    trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'lease', 'attempt_count', 'final_attempt'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<', now)]))
      .where('endpoint_id', 'in', trx.selectFrom('webhook_endpoints').select('id').where('enabled', '=', 1).where('deleted_at', 'is', null))
      .orderBy('next_attempt_at')
  const withDue = await dueBy(Date.now()).clearSelect().clearOrderBy().select('endpoint_id').distinct().limit(MAX_ENDPOINTS_PER_CLAIM).execute()
  if (withDue.length === 0) return []
  // An endpoint row locked (skipping those another instance holds) before its leases are counted: two instances never
  // count the same endpoint's leases at once, and neither waits for the other.
  const endpoints = await ctx.storage
    .forUpdateSkipLocked(trx.selectFrom('webhook_endpoints').select('id').where('id', 'in', withDue.map((row) => row.endpoint_id)).orderBy('id'))
    .execute()
  if (endpoints.length === 0) return []
  const endpointIds = endpoints.map((row) => row.id)
  const now = Date.now()
  const inFlight = await leasesByEndpoint(trx, endpointIds, now)
  const open = endpointIds.filter((id) => (inFlight.get(id) ?? 0) < endpointConcurrency)
  if (open.length === 0) return []
  const candidates = await ctx.storage.forUpdateSkipLocked(dueBy(now).where('endpoint_id', 'in', open).limit(free * 4)).execute()
  const picked = pickWithinEndpointBounds(await countInterrupted(trx, candidates, now), free, endpointConcurrency, inFlight)
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
  const timestamp = Math.floor(now / 1000)
  const claimed = rows.map((row): ClaimedDelivery => {
    const signers = secrets.get(row.endpoint_id) ?? []
    const body = renderBody(row.kind, { id: row.message_id, eventType: row.event_type, createdAt: row.created_at, payload: ctx.storage.parseJson<Record<string, unknown>>(row.payload) })
    const headers = {
      'webhook-id': row.message_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardWebhookSignature(signers.map((s) => s.secret), row.message_id, timestamp, body),
    }
    return {
      id: row.id,
      projectId: row.project_id,
      endpointId: row.endpoint_id,
      messageId: row.message_id,
      eventType: row.event_type,
      number: row.attempt_count + 1,
      finalAttempt: row.final_attempt,
      secretId: signers[0]?.id ?? null,
      request: prepareRequest(row.url, headers, body),
    }
  })
  await trx
    .insertInto('webhook_attempts')
    .values(claimed.map((delivery) => attemptRow(delivery, { status: 'in_progress', startedAt: now, durationMs: 0, request: delivery.request.record, response: null, error: null })))
    .onConflict((conflict) => conflict.columns(['delivery_id', 'number']).doNothing())
    .execute()
  return claimed
}

/** Live leases per endpoint, whichever instance holds them: the attempts in flight (or finished and not yet recorded). */
async function leasesByEndpoint(trx: WebhookDb, endpointIds: string[], now: number): Promise<Map<string, number>> {
  const rows = await trx
    .selectFrom('webhook_deliveries')
    .select((eb) => ['endpoint_id', eb.fn.countAll<number>().as('leases')])
    .where('leased_until', '>=', now)
    .where('endpoint_id', 'in', endpointIds)
    .where('status', '=', 'pending')
    .groupBy('endpoint_id')
    .execute()
  return new Map(rows.map((row) => [row.endpoint_id, Number(row.leases)]))
}

interface Candidate {
  id: string
  endpoint_id: string
  lease: string | null
  attempt_count: number
  final_attempt: number
}

/**
 * A due delivery that still carries a lease was held by an instance that stopped before recording its
 * attempt: that attempt is marked interrupted and counted, so the history shows what the receiver may
 * have got. A delivery whose interrupted attempt was its last fails. Returns the candidates still to send.
 */
async function countInterrupted(trx: WebhookDb, candidates: Candidate[], now: number): Promise<Candidate[]> {
  const live: Candidate[] = []
  for (const candidate of candidates) {
    if (candidate.lease === null) {
      live.push(candidate)
      continue
    }
    const marked = await trx
      .updateTable('webhook_attempts')
      .set({ status: 'interrupted', error: `the portal instance sending it (${candidate.lease}) stopped before recording an outcome; the receiver may have got it` })
      .where('delivery_id', '=', candidate.id)
      .where('number', '=', candidate.attempt_count + 1)
      .where('status', '=', 'in_progress')
      .executeTakeFirst()
    if (Number(marked.numUpdatedRows) === 0) {
      live.push({ ...candidate, lease: null })
      continue
    }
    countWebhookAttempts(['interrupted'])
    const attemptCount = candidate.attempt_count + 1
    const ended = attemptCount >= candidate.final_attempt
    await trx
      .updateTable('webhook_deliveries')
      .set({ attempt_count: attemptCount, lease: null, leased_until: null, updated_at: now, ...(ended ? { status: 'failed', next_attempt_at: null } : {}) })
      .where('id', '=', candidate.id)
      .execute()
    if (!ended) live.push({ ...candidate, lease: null, attempt_count: attemptCount })
  }
  return live
}

function pickWithinEndpointBounds(candidates: Candidate[], free: number, bound: number, inFlight: Map<string, number>): string[] {
  const taken = new Map(inFlight)
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

/** When the earliest pending delivery not yet due falls due; null when none waits. */
async function nextDue(trx: WebhookDb): Promise<number | null> {
  const row = await trx
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('at'))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '>', Date.now())
    .executeTakeFirst()
  return row?.at == null ? null : Number(row.at)
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
async function recordOutcomes(ctx: PortalContext, trx: WebhookDb, instance: string, batch: Outcome[]): Promise<void> {
  const { retrySchedule, disableAfterFailingSeconds } = ctx.config.webhooks
  const now = Date.now()
  // Fills in the row written as in_progress at the claim; one another instance marked interrupted stays so.
  await trx
    .insertInto('webhook_attempts')
    .values(batch.map(({ delivery, result }) => attemptRow(delivery, result)))
    .onConflict((conflict) =>
      conflict
        .columns(['delivery_id', 'number'])
        .doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'),
          started_at: eb.ref('excluded.started_at'),
          duration_ms: eb.ref('excluded.duration_ms'),
          response: eb.ref('excluded.response'),
          error: eb.ref('excluded.error'),
        }))
        .where('webhook_attempts.status', '=', 'in_progress'),
    )
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
}

function attemptRow(delivery: ClaimedDelivery, attempt: Pick<AttemptResult, 'startedAt' | 'durationMs' | 'request' | 'response' | 'error'> & { status: AttemptStatus }): WebhookTables['webhook_attempts'] {
  return {
    id: newId('att', attempt.startedAt),
    delivery_id: delivery.id,
    project_id: delivery.projectId,
    endpoint_id: delivery.endpointId,
    number: delivery.number,
    status: attempt.status,
    started_at: attempt.startedAt,
    duration_ms: attempt.durationMs,
    request: JSON.stringify(attempt.request),
    response: attempt.response === null ? null : JSON.stringify(attempt.response),
    error: attempt.error,
    secret_id: delivery.secretId,
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

async function disableAndAnnounce(ctx: PortalContext, trx: Connection, endpointId: string, reason: DisabledReason, now: number) {
  if (!(await disableEndpoint(trx, endpointId, reason, now))) return
  const endpoint = await tablesOf<WebhookTables>(trx).selectFrom('webhook_endpoints').select(['project_id', 'url']).where('id', '=', endpointId).executeTakeFirstOrThrow()
  const detail = reason === 'gone' ? 'the endpoint answered 410 Gone' : `every attempt failed for ${ctx.config.webhooks.disableAfterFailingSeconds} s`
  await ctx.notifications.publish(trx, endpoint.project_id, 'endpoint.disabled', {
    endpointId,
    url: endpoint.url,
    reason,
    detail,
    disabledAt: new Date(now).toISOString(),
  })
}
