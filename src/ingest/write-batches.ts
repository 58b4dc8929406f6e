import type { Kysely } from 'kysely'
import type { PortalContext } from '../context.ts'
import { writeEvents, type AcceptedEvent } from '../modules/write-events.ts'
import { claimIdempotencyKey, type StoredResponse } from './idempotency.ts'

/** One request's accepted events, with the idempotency record that must commit with them. */
export interface IngestBatch {
  projectId: string
  key: string | undefined
  response: StoredResponse
  accepted: AcceptedEvent[]
}

/** Enough to share one commit among every request of a busy moment, small enough to keep a transaction short. */
export const MAX_BATCHES_PER_TRANSACTION = 200

/**
 * Writes the batches of several requests in one transaction. A batch whose idempotency key is held
 * already (by an earlier request, or by another batch of this very group) writes nothing and
 * returns false, so that its request replays the first answer instead.
 */
export async function writeIngestBatches(trx: Kysely<any>, ctx: PortalContext, batches: IngestBatch[]): Promise<boolean[]> {
  const stored: boolean[] = []
  const events: AcceptedEvent[] = []
  for (const batch of batches) {
    const claimed = batch.key === undefined || (await claimIdempotencyKey(trx, batch.projectId, batch.key, batch.response))
    stored.push(claimed)
    if (claimed) events.push(...batch.accepted)
  }
  await writeEvents(trx, ctx, events)
  return stored
}
