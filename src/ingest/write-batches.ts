import type { Kysely } from 'kysely'
import type { WriteContext } from '../context.ts'
import type { Database } from '../storage/tables.ts'
import { writeEvents, type AcceptedEvent } from '../modules/write-events.ts'
import { inClaimOrder } from './claim-order.ts'
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
export async function writeIngestBatches(trx: Kysely<Database>, ctx: WriteContext, batches: IngestBatch[]): Promise<boolean[]> {
  const stored = new Map(batches.map((batch) => [batch, true]))
  for (const batch of inClaimOrder(batches, (batch) => batch)) {
    stored.set(batch, await claimIdempotencyKey(trx, batch.projectId, batch.key!, batch.response))
  }
  await writeEvents(trx, ctx, batches.flatMap((batch) => (stored.get(batch) ? batch.accepted : [])))
  return batches.map((batch) => stored.get(batch)!)
}
