import type { PortalContext } from '../context.ts'
import { recordOccurrences, type Occurrence, type RecordedOccurrence } from './group-store.ts'

interface PendingCapture {
  occurrence: Occurrence
  resolve(result: RecordedOccurrence): void
  reject(error: unknown): void
}

export interface CaptureWriter {
  /** Resolves once the occurrence is committed in its group. */
  write(occurrence: Occurrence): Promise<RecordedOccurrence>
  /** Waits for the captures already taken. */
  close(): Promise<void>
}

const MAX_CAPTURES_PER_TRANSACTION = 500

/**
 * Group commit: captures that arrive while a transaction is being written wait for the next one and
 * share it, so a burst costs one commit (one fsync on SQLite) per batch, not one per capture. A
 * capture is answered only after the transaction holding it has committed.
 */
export function createCaptureWriter(ctx: PortalContext): CaptureWriter {
  let pending: PendingCapture[] = []
  let draining: Promise<void> | null = null

  async function drain() {
    // Let the requests already read in this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve))
    while (pending.length > 0) {
      const batch = pending.slice(0, MAX_CAPTURES_PER_TRANSACTION)
      pending = pending.slice(batch.length)
      await commit(batch)
    }
    draining = null
  }

  async function commit(batch: PendingCapture[]) {
    try {
      const results = await ctx.storage.db.transaction().execute((trx) => recordOccurrences(trx, ctx, batch.map((item) => item.occurrence)))
      batch.forEach((item, index) => item.resolve(results[index]))
    } catch (error) {
      if (batch.length === 1 || ctx.storage.isUnavailable(error)) return batch.forEach((item) => item.reject(error))
      // One capture the database refuses must not fail the others that shared its transaction.
      for (const item of batch) await commit([item])
    }
  }

  return {
    write(occurrence) {
      return new Promise((resolve, reject) => {
        pending.push({ occurrence, resolve, reject })
        draining ??= drain()
      })
    },
    async close() {
      await draining
    },
  }
}
