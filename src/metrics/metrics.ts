import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * Every series the portal exports, in one registry per process: the code that counts something calls
 * one of the small functions below in one line, and `GET /metrics` serialises the registry. In
 * production a process runs one portal; the tests run several in one process, whose counts add up here.
 */
export const metricsRegistry = new Registry()

// process_* and nodejs_* series, event-loop lag (nodejs_eventloop_lag_*) among them.
collectDefaultMetrics({ register: metricsRegistry })

const registers = [metricsRegistry]

const ingestEvents = new Counter({
  name: 'portal_ingest_events_total',
  help: 'Events of committed ingest batches, by event type and outcome (accepted: stored; rejected: listed in `rejected`)',
  labelNames: ['type', 'outcome'] as const,
  registers,
})

const sentryItemsNotTaken = new Counter({
  name: 'portal_sentry_items_not_taken_total',
  help: 'Sentry envelope items of a kind the portal does not keep (attachments, profiles, replays, …), by item type: each answer names their category in X-Sentry-Rate-Limits, so that the SDK stops sending them and counts them in its client reports',
  labelNames: ['item_type'] as const,
  registers,
})

const sentryClientDiscarded = new Counter({
  name: 'portal_sentry_client_discarded_events_total',
  help: 'Events that Sentry SDKs report (client_report items) they discarded before sending, by reason (ratelimit_backoff, queue_overflow, …) and category',
  labelNames: ['reason', 'category'] as const,
  registers,
})

const httpResponses = new Counter({
  name: 'portal_http_responses_total',
  help: 'HTTP answers by route pattern, method and status class (2xx, 4xx, …)',
  labelNames: ['route', 'method', 'status_class'] as const,
  registers,
})

const httpDuration = new Histogram({
  name: 'portal_http_request_duration_seconds',
  help: 'Time from a request’s arrival to its answer, by route pattern and method',
  labelNames: ['route', 'method'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
})

const refusals = new Counter({
  name: 'portal_refusals_total',
  help: '429 and 503 answers by status and cause (the problem body’s `code`: rate_limited, overloaded, database_unavailable, …)',
  labelNames: ['status', 'cause'] as const,
  registers,
})

const commitConflicts = new Counter({
  name: 'portal_commit_conflicts_total',
  help: 'Group-commit transactions the database ended to break a deadlock or a serialization conflict (each runs again), by write path',
  labelNames: ['committer'] as const,
  registers,
})

const commitDuration = new Histogram({
  name: 'portal_commit_duration_seconds',
  help: 'One group-commit transaction, from BEGIN to durable COMMIT, by write path (ingest, errors)',
  labelNames: ['committer'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
})

const commitBatchSize = new Histogram({
  name: 'portal_commit_batch_size',
  help: 'Requests (ingest batches, captures) sharing one group-commit transaction, by write path',
  labelNames: ['committer'] as const,
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
  registers,
})

const backlogs = new Map<string, Set<() => number>>()

new Gauge({
  name: 'portal_pending_events',
  help: 'Events (a capture is one) accepted and waiting for their commit, by write path; LOAD_SHED_MAX_PENDING_EVENTS sheds above it',
  labelNames: ['committer'] as const,
  registers,
  collect() {
    this.reset()
    for (const [committer, sources] of backlogs) this.set({ committer }, [...sources].reduce((sum, backlog) => sum + backlog(), 0))
  },
})

interface PoolStats {
  totalCount: number
  idleCount: number
  waitingCount: number
}

const pools = new Set<PoolStats>()

new Gauge({
  name: 'portal_db_pool_waiting',
  help: 'Queries waiting for a PostgreSQL pool connection (DATABASE_POOL_SIZE); absent on SQLite',
  registers,
  collect() {
    this.reset()
    if (pools.size > 0) this.set([...pools].reduce((sum, pool) => sum + pool.waitingCount, 0))
  },
})

new Gauge({
  name: 'portal_db_pool_connections',
  help: 'PostgreSQL pool connections by state (busy, idle); absent on SQLite',
  labelNames: ['state'] as const,
  registers,
  collect() {
    this.reset()
    if (pools.size === 0) return
    const idle = [...pools].reduce((sum, pool) => sum + pool.idleCount, 0)
    this.set({ state: 'idle' }, idle)
    this.set({ state: 'busy' }, [...pools].reduce((sum, pool) => sum + pool.totalCount, 0) - idle)
  },
})

interface OutboxStates {
  state(): { backlogEvents: number; backlogRows: number; unavailable?: string; outages: number; reopens: number }
}

const outboxes = new Set<OutboxStates>()
const sumOf = (value: (state: ReturnType<OutboxStates['state']>) => number) => [...outboxes].reduce((sum, outbox) => sum + value(outbox.state()), 0)

new Gauge({
  name: 'portal_event_outbox_events',
  help: 'Acknowledged events in the event outbox not yet applied to the DuckDB event store (ingest answers 503 past EVENT_OUTBOX_MAX_EVENTS); absent without DuckDB',
  registers,
  collect() {
    this.reset()
    if (outboxes.size > 0) this.set(sumOf((state) => state.backlogEvents))
  },
})

new Gauge({
  name: 'portal_event_store_up',
  help: '1 while events can be applied to the DuckDB event store and read from it, 0 during an outage (a full disk, a database DuckDB invalidated); absent without DuckDB',
  registers,
  collect() {
    this.reset()
    if (outboxes.size > 0) this.set(sumOf((state) => (state.unavailable ? 0 : 1)) === outboxes.size ? 1 : 0)
  },
})

new Counter({
  name: 'portal_event_store_outages_total',
  help: 'Times the DuckDB event store became unable to apply or serve events',
  registers,
  collect() {
    this.reset()
    this.inc(sumOf((state) => state.outages))
  },
})

new Counter({
  name: 'portal_event_store_reopens_total',
  help: 'Times the portal reopened the DuckDB event store after DuckDB invalidated it, without a restart',
  registers,
  collect() {
    this.reset()
    this.inc(sumOf((state) => state.reopens))
  },
})

const webhookAttempts = new Counter({
  name: 'portal_webhook_attempts_total',
  help: 'Finished webhook attempts by status (succeeded, failed, timeout, network_error, refused, interrupted)',
  labelNames: ['status'] as const,
  registers,
})

/** Set by the scrape from the scraped portal's database: shared by every instance on that database. */
export const webhookQueueDepth = new Gauge({
  name: 'portal_webhook_queue_depth',
  help: 'Pending webhook deliveries in the database (due, waiting for a retry, or in flight), every instance’s',
  registers,
})

export const webhookOldestPendingAge = new Gauge({
  name: 'portal_webhook_oldest_pending_age_seconds',
  help: 'Age of the oldest pending webhook delivery; 0 when none is pending',
  registers,
})

const retentionDeletedRows = new Counter({
  name: 'portal_retention_deleted_rows_total',
  help: 'Rows the retention job purged, by table',
  labelNames: ['table'] as const,
  registers,
})

const retentionLastRun = new Gauge({
  name: 'portal_retention_last_run_timestamp_seconds',
  help: 'When the retention job last finished a pass (Unix time)',
  registers,
})

/** The events of a committed batch; `rejectedTypes` must be module types or `unknown`, so that a client cannot add series. */
export function countIngestEvents(accepted: { module: { type: string } }[], rejectedTypes: string[]): void {
  for (const { module } of accepted) ingestEvents.inc({ type: module.type, outcome: 'accepted' })
  for (const type of rejectedTypes) ingestEvents.inc({ type, outcome: 'rejected' })
}

export function countSentryItemNotTaken(itemType: string): void {
  sentryItemsNotTaken.inc({ item_type: itemType })
}

export function countSentryClientDiscarded(reason: string, category: string, quantity: number): void {
  sentryClientDiscarded.inc({ reason, category }, quantity)
}

export function countResponse(route: string, method: string, statusCode: number, seconds: number): void {
  httpResponses.inc({ route, method, status_class: `${Math.floor(statusCode / 100)}xx` })
  httpDuration.observe({ route, method }, seconds)
}

export function countRefusal(status: number, cause: string): void {
  if (status === 429 || status === 503) refusals.inc({ status: String(status), cause })
}

/** A group-commit transaction the database ended for a concurrent one's sake; it runs again. */
export function countCommitConflict(committer: string): void {
  commitConflicts.inc({ committer })
}

export function observeCommit(committer: string, requests: number, seconds: number): void {
  commitDuration.observe({ committer }, seconds)
  commitBatchSize.observe({ committer }, requests)
}

/** Makes a write path's backlog part of portal_pending_events until the returned function is called. */
export function trackBacklog(committer: string, backlog: () => number): () => void {
  const sources = backlogs.get(committer) ?? backlogs.set(committer, new Set()).get(committer)!
  sources.add(backlog)
  return () => sources.delete(backlog)
}

/** Makes a PostgreSQL pool part of the pool gauges until the returned function is called. */
export function trackPool(pool: PoolStats): () => void {
  pools.add(pool)
  return () => pools.delete(pool)
}

/** Makes an event outbox part of the event store series until the returned function is called. */
export function trackEventOutbox(outbox: OutboxStates): () => void {
  outboxes.add(outbox)
  return () => outboxes.delete(outbox)
}

export function countWebhookAttempts(statuses: string[]): void {
  for (const status of statuses) webhookAttempts.inc({ status })
}

/** For the retention job: `rows` purged from `table` (a bounded step's count). */
export function countRetentionDeleted(table: string, rows: number): void {
  if (rows > 0) retentionDeletedRows.inc({ table }, rows)
}

/** For the retention job: a whole pass has finished. */
export function markRetentionRun(at = Date.now()): void {
  retentionLastRun.set(at / 1000)
}
