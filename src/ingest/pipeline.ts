import type { FastifyReply } from 'fastify'
import type { PortalContext } from '../context.ts'
import type { Principal } from '../http/auth.ts'
import { refuseWhenBacklogged, refuseWhenOutboxFull } from '../http/load-shedding.ts'
import { newId } from '../ids.ts'
import { countIngestEvents } from '../metrics/metrics.ts'
import { moduleByType, registeredAtRunTime } from '../modules/registry.ts'
import type { AcceptedEvent } from '../modules/write-events.ts'
import { createGroupCommitter, type GroupCommitter } from '../storage/group-commit.ts'
import { IngestWriter } from './ingest-writer.ts'
import { admitToProject } from './rate-limit.ts'
import { checkEvent } from './validate-event.ts'
import { MAX_BATCHES_PER_TRANSACTION, writeIngestBatches, type IngestBatch } from './write-batches.ts'

export type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>

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
  /** checks `{ type, ts, data }` events one by one; those that pass are stamped with ids and `receivedAt` */
  check(projectId: string, events: unknown[], receivedAt: number): { accepted: AcceptedEvent[]; rejected: EventRejection[] }
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
    check(projectId, events, receivedAt) {
      const accepted: AcceptedEvent[] = []
      const rejected: EventRejection[] = []
      events.forEach((raw, index) => {
        const checked = checkEvent(raw)
        if ('reason' in checked) return void rejected.push({ index, reason: checked.reason })
        const event = { id: newId('evt', receivedAt), projectId, ts: checked.ts, receivedAt, data: checked.data }
        accepted.push({ module: checked.module, event, dataJson: checked.dataJson })
      })
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
