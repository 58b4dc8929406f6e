import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { captureBody, type CaptureContext, type CaptureDefaults } from './capture.js'
import type { PortalEvent } from './event.js'
import { batchBody, ENVELOPE_BYTES, EventQueue, type QueuedEvent } from './event-queue.js'
import { EventMethods } from './events.generated.js'
import { installProcessHooks } from './process-hooks.js'
import { retryDelay, type RetryPolicy } from './retry.js'
import { getHealth, postBatch, postCapture, type BatchOutcome, type CaptureResult, type Connection, type PingResult } from './transport.js'

export interface PortalClientOptions extends CaptureDefaults {
  /** the portal's address, e.g. http://127.0.0.1:8080 */
  baseUrl: string
  /** the project's API key (`pk_…`) */
  apiKey: string
  /** the webhook secret created with the API key; signs every batch */
  webhookSecret: string
  /** events per batch (default 500) */
  maxBatchEvents?: number
  /** bytes per batch body (default 4 MiB, under the portal's default limit of 5 MiB) */
  maxBatchBytes?: number
  /** longest wait of a queued event before its batch is sent (default 1000 ms) */
  flushIntervalMs?: number
  /** events waiting to be sent; beyond it the oldest is dropped and counted (default 10000) */
  maxQueueSize?: number
  /** batches sent at once (default 1, which keeps the order of events) */
  maxConcurrentBatches?: number
  /** timeout of one HTTP request (default 10000 ms) */
  timeoutMs?: number
  /** retries of a batch on network errors, 408, 409, 429 and 5xx (default 10 retries, 200 ms doubling up to 10 s) */
  retry?: Partial<RetryPolicy>
  /** capture `uncaughtException` and `unhandledRejection`, flush, then exit with code 1 (default false) */
  captureProcessErrors?: boolean
  /** how long the process hooks wait for the capture and the flush before exiting (default 2000 ms) */
  shutdownTimeoutMs?: number
  /** events the portal (or the client, before sending) refused; they are never retried */
  onRejected?: (rejections: RejectedEvent[]) => void
  /** batches or captures that could not be delivered, and refused credentials */
  onError?: (error: PortalClientError) => void
}

export interface RejectedEvent {
  /** the event as it was queued: `{ type, ts, data }` */
  event: unknown
  /** the field and the problem, e.g. `data.actor: required` */
  reason: string
}

export type PortalClientErrorCode = 'credentials_refused' | 'retries_exhausted' | 'batch_failed' | 'capture_failed'

export class PortalClientError extends Error {
  constructor(
    readonly code: PortalClientErrorCode,
    message: string,
    /** events lost with this error (0 for a capture) */
    readonly events: number,
    readonly status?: number,
  ) {
    super(message)
    this.name = 'PortalClientError'
  }
}

/** Counters since the client was made; every queued event ends in exactly one of accepted, rejected or dropped. */
export interface ClientStats {
  queued: number
  inFlight: number
  accepted: number
  rejected: number
  /** lost: queue full (oldest dropped), retries exhausted, batch failed, credentials refused, sent after close */
  dropped: number
  retries: number
}

interface FlushWaiter {
  throughSeq: number
  resolve(): void
}

const DEFAULT_RETRY: RetryPolicy = { maxRetries: 10, minDelayMs: 200, maxDelayMs: 10_000 }

/**
 * A typed client of the portal's ingest path: one method per event type, batching by count, bytes
 * and time, signed batches with one idempotency key each (reused on every retry of that batch).
 */
export class PortalClient extends EventMethods {
  private readonly connection: Connection
  private readonly maxBatchEvents: number
  private readonly maxBatchBytes: number
  private readonly flushIntervalMs: number
  private readonly maxConcurrentBatches: number
  private readonly retryPolicy: RetryPolicy
  private readonly captureDefaults: CaptureDefaults
  private readonly onRejected: (rejections: RejectedEvent[]) => void
  private readonly onError: (error: PortalClientError) => void
  private readonly queue: EventQueue
  private readonly counts = { accepted: 0, rejected: 0, dropped: 0, retries: 0 }
  /** the lowest sequence number of each batch being sent, with its size */
  private readonly inFlight = new Map<number, number>()
  private readonly captures = new Set<Promise<unknown>>()
  private flushWaiters: FlushWaiter[] = []
  private nextSeq = 0
  /** queued events up to this sequence number are sent without waiting for a full batch */
  private sendThroughSeq = -1
  private timer: NodeJS.Timeout | undefined
  private refusedBy: PortalClientError | undefined
  private closing: Promise<void> | undefined
  private readonly uninstallProcessHooks: (() => void) | undefined

  constructor(options: PortalClientOptions) {
    super()
    this.connection = {
      baseUrl: httpUrl(options.baseUrl),
      apiKey: requiredText(options.apiKey, 'apiKey'),
      webhookSecret: requiredText(options.webhookSecret, 'webhookSecret'),
      timeoutMs: positive(options.timeoutMs, 'timeoutMs', 10_000),
    }
    this.maxBatchEvents = positive(options.maxBatchEvents, 'maxBatchEvents', 500)
    this.maxBatchBytes = positive(options.maxBatchBytes, 'maxBatchBytes', 4 * 1024 * 1024)
    this.flushIntervalMs = positive(options.flushIntervalMs, 'flushIntervalMs', 1000)
    this.maxConcurrentBatches = positive(options.maxConcurrentBatches, 'maxConcurrentBatches', 1)
    this.queue = new EventQueue(positive(options.maxQueueSize, 'maxQueueSize', 10_000))
    this.retryPolicy = {
      maxRetries: positive(options.retry?.maxRetries, 'retry.maxRetries', DEFAULT_RETRY.maxRetries, 0),
      minDelayMs: positive(options.retry?.minDelayMs, 'retry.minDelayMs', DEFAULT_RETRY.minDelayMs),
      maxDelayMs: positive(options.retry?.maxDelayMs, 'retry.maxDelayMs', DEFAULT_RETRY.maxDelayMs),
    }
    this.captureDefaults = { release: options.release, environment: options.environment, service: options.service }
    this.onRejected = options.onRejected ?? ((rejections) => warn(`${rejections.length} event(s) rejected, first: ${rejections[0].reason}`))
    this.onError = options.onError ?? ((error) => warn(error.message))
    if (options.captureProcessErrors) {
      this.uninstallProcessHooks = installProcessHooks(this, positive(options.shutdownTimeoutMs, 'shutdownTimeoutMs', 2000))
    }
  }

  /** Queues an event of any type; never throws: problems go to `onRejected` and `stats()`. */
  send(event: PortalEvent): void {
    const seq = this.nextSeq++
    if (this.closing || this.refusedBy) {
      this.counts.dropped += 1
      return
    }
    const serialised = serialiseEvent(event)
    if ('reason' in serialised) return this.reject([{ event, reason: serialised.reason }])
    const bytes = Buffer.byteLength(serialised.json)
    if (bytes + ENVELOPE_BYTES > this.maxBatchBytes) {
      return this.reject([{ event, reason: `event: ${bytes} bytes, larger than maxBatchBytes (${this.maxBatchBytes})` }])
    }
    if (this.queue.push({ seq, json: serialised.json, bytes })) this.counts.dropped += 1
    this.pump()
  }

  /** Sends an exception to the errors module now (not batched); resolves to the portal's answer, or undefined when it could not be delivered. */
  captureException(thrown: unknown, context: CaptureContext = {}): Promise<CaptureResult | undefined> {
    const capture = this.deliverCapture(captureBody(thrown, context, this.captureDefaults))
    this.captures.add(capture)
    return capture.finally(() => this.captures.delete(capture))
  }

  /** Resolves when every event queued and every capture started before the call is delivered, rejected or dropped. */
  async flush(): Promise<void> {
    const throughSeq = this.nextSeq - 1
    const captures = [...this.captures]
    this.sendThroughSeq = Math.max(this.sendThroughSeq, throughSeq)
    const eventsDone = new Promise<void>((resolve) => this.flushWaiters.push({ throughSeq, resolve }))
    this.pump()
    this.settleFlushes()
    await Promise.all([eventsDone, ...captures])
  }

  /** Stops taking events, delivers what is queued (within the retry policy), removes the process hooks. */
  close(): Promise<void> {
    this.closing ??= this.flush().then(() => {
      clearTimeout(this.timer)
      this.uninstallProcessHooks?.()
    })
    return this.closing
  }

  /** `GET /api/health`: whether the portal answers and reaches its database and token store (it does not check the API key). */
  ping(): Promise<PingResult> {
    return getHealth(this.connection)
  }

  stats(): ClientStats {
    const inFlight = [...this.inFlight.values()].reduce((sum, size) => sum + size, 0)
    return { queued: this.queue.length, inFlight, ...this.counts }
  }

  /** Starts batches while there is room and something is due: a full batch, a flush, or the interval. */
  private pump(): void {
    while (this.inFlight.size < this.maxConcurrentBatches && this.batchIsDue()) {
      this.startBatch(this.queue.takeBatch(this.maxBatchEvents, this.maxBatchBytes))
    }
    if (this.queue.length > 0 && this.nextSeq - 1 > this.sendThroughSeq && this.timer === undefined) {
      // Not unref'd: a short script that never calls close() still sends what it queued before exiting.
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.sendThroughSeq = Math.max(this.sendThroughSeq, this.nextSeq - 1)
        this.pump()
      }, this.flushIntervalMs)
    }
  }

  private batchIsDue(): boolean {
    const oldest = this.queue.oldestSeq
    if (oldest === undefined) return false
    return oldest <= this.sendThroughSeq || this.queue.length >= this.maxBatchEvents || this.queue.byteLength >= this.maxBatchBytes
  }

  private startBatch(events: QueuedEvent[]): void {
    const firstSeq = events[0].seq
    this.inFlight.set(firstSeq, events.length)
    this.deliver(events)
      .catch((error: unknown) => this.fail('batch_failed', `unexpected failure sending a batch: ${(error as Error).message}`, events.length))
      .finally(() => {
        this.inFlight.delete(firstSeq)
        this.pump()
        this.settleFlushes()
      })
  }

  /** Sends one batch until it is delivered or given up; the body and its idempotency key stay the same on every retry. */
  private async deliver(events: QueuedEvent[]): Promise<void> {
    const body = batchBody(events)
    const idempotencyKey = randomUUID()
    for (let retry = 0; ; retry++) {
      if (this.refusedBy) return void (this.counts.dropped += events.length)
      const outcome = await postBatch(this.connection, body, idempotencyKey)
      if (outcome.kind !== 'retry') return this.settleBatch(events, outcome)
      if (retry >= this.retryPolicy.maxRetries) {
        return this.fail('retries_exhausted', `batch of ${events.length} event(s) given up after ${retry} retries: ${outcome.why}`, events.length)
      }
      this.counts.retries += 1
      await sleep(retryDelay(this.retryPolicy, retry, outcome.retryAfterMs))
    }
  }

  private async settleBatch(events: QueuedEvent[], outcome: Exclude<BatchOutcome, { kind: 'retry' }>): Promise<void> {
    switch (outcome.kind) {
      case 'delivered':
        this.counts.accepted += outcome.accepted
        if (outcome.rejected.length > 0) this.reject(outcome.rejected.map(({ index, reason }) => ({ event: JSON.parse(events[index].json), reason })))
        return
      case 'too-large':
        return this.split(events, outcome.why)
      case 'refused':
        return this.refuse(events.length, outcome.status, outcome.why)
      case 'failed':
        return this.fail('batch_failed', `batch of ${events.length} event(s) refused: ${outcome.why}`, events.length, outcome.status)
    }
  }

  /** A 413: halves are sent as new batches (new bodies need new idempotency keys); one event alone is rejected. */
  private async split(events: QueuedEvent[], why: string): Promise<void> {
    if (events.length === 1) return this.reject([{ event: JSON.parse(events[0].json), reason: `event: larger than the portal's batch size limit (${why})` }])
    const middle = Math.ceil(events.length / 2)
    await this.deliver(events.slice(0, middle))
    await this.deliver(events.slice(middle))
  }

  /** 401/403: the key or the secret is wrong; every later event would be refused too, so stop and say so once. */
  private refuse(batchEvents: number, status: number, why: string): void {
    const lost = batchEvents + this.queue.clear().length
    this.counts.dropped += lost
    if (this.refusedBy) return
    this.refusedBy = new PortalClientError('credentials_refused', `the portal refused the credentials (${why}); the client stopped sending`, lost, status)
    this.onError(this.refusedBy)
  }

  private fail(code: PortalClientErrorCode, message: string, events: number, status?: number): void {
    this.counts.dropped += events
    this.onError(new PortalClientError(code, message, events, status))
  }

  private reject(rejections: RejectedEvent[]): void {
    this.counts.rejected += rejections.length
    this.onRejected(rejections)
  }

  private settleFlushes(): void {
    const oldestQueued = this.queue.oldestSeq ?? Infinity
    const oldestInFlight = Math.min(...this.inFlight.keys())
    const oldestPending = Math.min(oldestQueued, oldestInFlight)
    const waiting = this.flushWaiters.filter((waiter) => waiter.throughSeq >= oldestPending)
    for (const waiter of this.flushWaiters) if (waiter.throughSeq < oldestPending) waiter.resolve()
    this.flushWaiters = waiting
  }

  /** Sends one capture until it is stored or given up; its idempotency key stays the same on every retry. */
  private async deliverCapture(body: string): Promise<CaptureResult | undefined> {
    const idempotencyKey = randomUUID()
    for (let retry = 0; ; retry++) {
      const outcome = await postCapture(this.connection, body, idempotencyKey)
      if (outcome.kind === 'captured') return outcome.result
      if (outcome.kind === 'failed' || retry >= this.retryPolicy.maxRetries) {
        this.onError(new PortalClientError('capture_failed', `exception capture not delivered: ${outcome.why}`, 0, outcome.kind === 'failed' ? outcome.status : undefined))
        return undefined
      }
      await sleep(retryDelay(this.retryPolicy, retry, outcome.retryAfterMs))
    }
  }
}

function serialiseEvent(event: PortalEvent): { json: string } | { reason: string } {
  if (typeof event !== 'object' || event === null) return { reason: 'event: must be an object with type and data' }
  let ts: string
  try {
    ts = event.ts === undefined ? new Date().toISOString() : event.ts instanceof Date ? event.ts.toISOString() : event.ts
  } catch {
    return { reason: 'ts: must be a valid date' }
  }
  try {
    return { json: JSON.stringify({ type: event.type, ts, data: event.data }) }
  } catch (error) {
    return { reason: `data: cannot be serialised to JSON (${(error as Error).message})` }
  }
}

function warn(message: string): void {
  process.emitWarning(message, 'PortalClientWarning')
}

function httpUrl(value: unknown): string {
  if (typeof value === 'string' && /^https?:\/\/[^\s/]+/.test(value)) return value.replace(/\/+$/, '')
  throw new TypeError(`PortalClient: baseUrl must be an http(s) URL, got ${JSON.stringify(value)}`)
}

function requiredText(value: unknown, name: string): string {
  if (typeof value === 'string' && value !== '') return value
  throw new TypeError(`PortalClient: ${name} is required, a non-empty string`)
}

function positive(value: unknown, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback
  if (typeof value === 'number' && Number.isInteger(value) && value >= min) return value
  throw new TypeError(`PortalClient: ${name} must be an integer of at least ${min}, got ${JSON.stringify(value)}`)
}
