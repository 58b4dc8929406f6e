import type { FastifyReply } from 'fastify'
import type { PortalContext } from '../context.ts'
import type { Principal } from '../http/auth.ts'
import { refuseWhenBacklogged, refuseWhenOutboxFull } from '../http/load-shedding.ts'
import { newEventId } from '../ids.ts'
import { countIngestEvents } from '../metrics/metrics.ts'
import { moduleByType, registeredAtRunTime } from '../modules/registry.ts'
import type { AcceptedEvent } from '../modules/write-events.ts'
import { createGroupCommitter, type GroupCommitter } from '../storage/group-commit.ts'
import { IngestWriter } from './ingest-writer.ts'
import { admitToProject } from './rate-limit.ts'
import { checkEvent } from './validate-event.ts'
import { MAX_BATCHES_PER_TRANSACTION, writeIngestBatches, type IngestBatch } from './write-batches.ts'

export type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>

/** Events checked between two turns of the event loop: a 5 MB batch of 19,000 logs took 0.5 s in one piece on a loaded machine. */
const CHECK_SLICE = 2_000

export interface EventRejection {
  /** zero-based position among the events handed in */
  index: number
  reason: string
}

/**
 * The one way events get in, whatever protocol brought them (the signed ingest, OTLP, Sentry): the
 * load-shedding check, the project's rate limits, each event checked against its module's schema,
 * and a group commit into the module tables that resolves only once the events are on disk (on a worker
 * thread where the database's writes would otherwise take the event loop's: IngestWriter).
 */
export interface IngestPipeline {
  /** 503 while too many events wait for their commit (`overloaded`), or in the event store's outbox (EVENT_OUTBOX_MAX_EVENTS) */
  refuseWhenBacklogged(): void
  /** takes `events` events and one batch from the project's buckets; 429 with Retry-After past them */
  admit(principal: ApiKeyPrincipal, reply: FastifyReply, events: number): Promise<void>
  /**
   * checks `{ type, ts, data }` events one by one; those that pass are stamped with ids and `receivedAt`. A large batch
   * gives the event loop back every CHECK_SLICE events, so that health and small requests are not held behind it.
   */
  check(projectId: string, events: unknown[], receivedAt: number): Promise<{ accepted: AcceptedEvent[]; rejected: EventRejection[] }>
  /** writes a batch with any idempotency record; false when its key was held already (nothing written) */
  commit(batch: IngestBatch): Promise<boolean>
  close(): Promise<void>
}

export async function createIngestPipeline(ctx: PortalContext): Promise<IngestPipeline> {
  // The writer's thread loads the registry afresh: with a module registered at run time (a test's), ingest stays here.
  const committer: GroupCommitter<IngestBatch, boolean> = ctx.storage.writerLock && registeredAtRunTime.length === 0
    ? await IngestWriter.start(ctx, ctx.storage.writerLock)
    : createGroupCommitter<IngestBatch, boolean>(ctx.storage, (trx, batches) => writeIngestBatches(trx, ctx, batches), MAX_BATCHES_PER_TRANSACTION, (batch) => batch.accepted.length, 'ingest')
  return {
    refuseWhenBacklogged() {
      refuseWhenBacklogged(committer, ctx.config.loadShedding)
      refuseWhenOutboxFull(ctx.storage.eventOutbox, ctx.config.eventOutboxMaxEvents, ctx.config.loadShedding.retryAfterSeconds)
    },
    admit: (principal, reply, events) => admitToProject(ctx, principal, reply, events),
    async check(projectId, events, receivedAt) {
      const accepted: AcceptedEvent[] = []
      const rejected: EventRejection[] = []
      for (let index = 0; index < events.length; index++) {
        if (index > 0 && index % CHECK_SLICE === 0) await new Promise((resolve) => setImmediate(resolve))
        const checked = checkEvent(events[index])
        if ('reason' in checked) {
          rejected.push({ index, reason: checked.reason })
          continue
        }
        const event = { id: newEventId(receivedAt), projectId, ts: checked.ts, receivedAt, data: checked.data }
        accepted.push({ module: checked.module, event, dataJson: checked.dataJson })
      }
      countIngestEvents([], rejected.map(({ index }) => moduleByType.get((events[index] as { type?: unknown } | null)?.type as string)?.type ?? 'unknown'))
      return { accepted, rejected }
    },
    async commit(batch) {
      const stored = await committer.write(batch)
      if (stored) countIngestEvents(batch.accepted, [])
      return stored
    },
    close: () => committer.close(),
  }
}
