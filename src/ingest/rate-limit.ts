import type { FastifyReply } from 'fastify'
import type { IngestRateLimiter, PortalContext, RateDecision } from '../context.ts'
import type { Principal } from '../http/auth.ts'
import { ProblemError } from '../http/problem.ts'

/** The headers every admitted or refused request carries (OpenAPI response headers). */
export const RATE_HEADERS = {
  'RateLimit-Limit': {
    type: 'integer',
    description: 'the project’s limit, per second, of the bucket reported: the one that refused, else whichever of events and batches has less of itself left',
  },
  'RateLimit-Remaining': { type: 'integer', description: 'what is left of it now' },
  'RateLimit-Reset': { type: 'integer', description: 'seconds until it is full again' },
}

/**
 * Takes `events` events and one batch from the project's buckets, shared by everything an API key
 * sends (ingest batches and error captures), and sets the RateLimit headers; throws the 429 when refused.
 */
export async function admitToProject(ctx: PortalContext, principal: Extract<Principal, { kind: 'apiKey' }>, reply: FastifyReply, events: number): Promise<void> {
  const eventsPerSecond = Math.min(ctx.config.ingest.eventsPerSecond, principal.projectEventsPerSecond ?? Infinity)
  const decision = await ctx.rateLimiter.take(principal.projectId, events, eventsPerSecond)
  reply.header('ratelimit-limit', decision.limit)
  reply.header('ratelimit-remaining', decision.remaining)
  reply.header('ratelimit-reset', decision.resetSeconds)
  if (decision.emptyForMs > 0) emptyBuckets.set(principal.projectId, { decision, until: Date.now() + decision.emptyForMs })
  if (!decision.allowed) throw rateLimited(decision, decision.retryAfterSeconds)
}

/**
 * Projects whose bucket a decision left below one token (a large batch admitted into debt, or a refusal), until it
 * refills: meanwhile any batch with an event is refused whatever it holds, so ingest refuses it before reading and
 * parsing its body. Under twenty clients sending 5 MB batches, parsing the refused ones kept the event loop, and
 * health with it, busy for seconds. Other instances sharing the buckets through Redis only take more tokens, so the
 * refusal stays right; the debt admits no batch before `until` whichever instance asks.
 */
const emptyBuckets = new Map<string, { decision: RateDecision; until: number }>()
const MAX_EMPTY_BUCKETS = 10_000

/** Whether the project's bucket is below one token now: any batch with an event would be refused. */
export function bucketEmpty(projectId: string): boolean {
  const empty = emptyBuckets.get(projectId)
  return empty !== undefined && Date.now() < empty.until
}

/** The 429 `admitToProject` would give any batch of the project now, without looking at the batch; else nothing. */
export function refuseWhileBucketEmpty(projectId: string, reply: FastifyReply): void {
  const empty = emptyBuckets.get(projectId)
  if (!empty) return
  const now = Date.now()
  if (now >= empty.until) return void emptyBuckets.delete(projectId)
  if (emptyBuckets.size > MAX_EMPTY_BUCKETS) for (const [project, { until }] of emptyBuckets) if (until <= now) emptyBuckets.delete(project)
  const { bucket, limit } = empty.decision.empty ?? empty.decision
  const retryAfterSeconds = Math.max(1, Math.ceil((empty.until - now) / 1000))
  reply.header('ratelimit-limit', limit)
  reply.header('ratelimit-remaining', 0)
  reply.header('ratelimit-reset', retryAfterSeconds)
  throw rateLimited({ bucket, limit }, retryAfterSeconds)
}

function rateLimited(decision: Pick<RateDecision, 'bucket' | 'limit'>, retryAfterSeconds: number) {
  return new ProblemError(429, 'rate_limited', `the project's ${decision.bucket} limit of ${decision.limit} per second is reached; retry after ${retryAfterSeconds} s`, {
    'retry-after': String(retryAfterSeconds),
  })
}

/**
 * Token buckets of our own rather than rate-limiter-flexible's limiters: ours admit a batch larger than a
 * second's allowance into debt (a limiter refuses a consume above its points for ever), take events and the
 * batch in one decision (two limiters would take events for a batch the second then refuses), follow a
 * project's own lower limit per call, and return the reason. In memory they are 1.4–1.6× as fast (74,000–
 * 153,000 against 52,000–95,000 decisions/s); through Redis the figures were inconclusive on a loaded machine
 * (373–967 against 822–851/s: one round trip of one script against two at once), `npm run bench -- libraries` (bench/libraries.ts), 2026-11-27, the shared 2-core development machine under load (two runs).
 */
export interface BucketState {
  events: number
  batches: number
  updatedAt: number
}

/** The token-bucket arithmetic for both buckets; the Redis script (redis-rate-limit.ts) does the same. */
export function decide(state: BucketState | undefined, now: number, events: number, eventsPerSecond: number, batchesPerSecond: number) {
  const elapsed = state ? Math.max(0, now - state.updatedAt) : 0
  const eventTokens = Math.min(eventsPerSecond, (state?.events ?? eventsPerSecond) + (elapsed * eventsPerSecond) / 1000)
  const batchTokens = Math.min(batchesPerSecond, (state?.batches ?? batchesPerSecond) + (elapsed * batchesPerSecond) / 1000)
  const eventsNeeded = Math.min(events, eventsPerSecond)
  const eventsOk = eventTokens >= eventsNeeded
  const batchesOk = batchTokens >= 1
  const allowed = eventsOk && batchesOk
  const next: BucketState = allowed
    ? { events: eventTokens - events, batches: batchTokens - 1, updatedAt: now }
    : { events: eventTokens, batches: batchTokens, updatedAt: now }
  return { next, decision: describe(allowed, eventsOk, next, eventsNeeded, eventTokens, batchTokens, eventsPerSecond, batchesPerSecond) }
}

function describe(
  allowed: boolean,
  eventsOk: boolean,
  next: BucketState,
  eventsNeeded: number,
  eventTokens: number,
  batchTokens: number,
  eventsPerSecond: number,
  batchesPerSecond: number,
): Omit<RateDecision, 'source'> {
  // Admitted: the bucket with the smaller share of itself left, so a client pacing itself by the headers
  // sees the batches limit coming as well as the events one.
  const bucket = allowed ? (next.batches / batchesPerSecond < next.events / eventsPerSecond ? 'batches' : 'events') : eventsOk ? 'batches' : 'events'
  const [tokens, rate] = bucket === 'events' ? [next.events, eventsPerSecond] : [next.batches, batchesPerSecond]
  const retryAfter = allowed
    ? 0
    : Math.max(eventsOk ? 0 : (eventsNeeded - eventTokens) / eventsPerSecond, batchTokens >= 1 ? 0 : (1 - batchTokens) / batchesPerSecond)
  const eventsEmptyFor = next.events >= 1 ? 0 : (1 - next.events) / eventsPerSecond
  const batchesEmptyFor = next.batches >= 1 ? 0 : (1 - next.batches) / batchesPerSecond
  const emptyFor = Math.max(eventsEmptyFor, batchesEmptyFor)
  return {
    allowed,
    bucket,
    limit: rate,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.ceil((rate - tokens) / rate),
    retryAfterSeconds: Math.ceil(retryAfter),
    emptyForMs: Math.floor(emptyFor * 1000),
    ...(emptyFor > 0 && { empty: eventsEmptyFor >= batchesEmptyFor ? { bucket: 'events' as const, limit: eventsPerSecond } : { bucket: 'batches' as const, limit: batchesPerSecond } }),
  }
}

export function createMemoryRateLimiter(batchesPerSecond: number): IngestRateLimiter {
  const states = new Map<string, BucketState>()
  return {
    async take(projectId, events, eventsPerSecond) {
      const now = Date.now()
      const { next, decision } = decide(states.get(projectId), now, events, eventsPerSecond, batchesPerSecond)
      states.set(projectId, next)
      if (states.size > 100_000) dropFullBuckets(states, now, eventsPerSecond, batchesPerSecond)
      return { ...decision, source: 'memory' }
    },
    async close() {},
  }
}

// A bucket idle long enough to be full again carries no information; forgetting it bounds memory.
function dropFullBuckets(states: Map<string, BucketState>, now: number, eventsPerSecond: number, batchesPerSecond: number) {
  for (const [key, state] of states) {
    if (decide(state, now, 0, eventsPerSecond, batchesPerSecond).next.events >= eventsPerSecond) states.delete(key)
  }
}
