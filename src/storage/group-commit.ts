import type { Kysely } from 'kysely'
import * as portalMetrics from '../metrics/metrics.ts'
import { PoolExhaustedError, type Storage } from './storage.ts'
import type { Database } from './tables.ts'

/** Runs of one transaction that the database ends for a concurrent one's sake, before its items fail. */
const MAX_CONFLICT_ATTEMPTS = 3

export interface GroupCommitter<I, R> {
  /** Resolves with the item's result once the transaction holding it has committed. */
  write(item: I): Promise<R>
  /** The weight of the items written and not yet answered: what waits for the database. */
  readonly backlog: number
  /** Waits for the items already taken. */
  close(): Promise<void>
}

/** Where a group committer's figures go: the process's metrics, or those of the thread it answers to. */
export type CommitMetrics = Pick<typeof portalMetrics, 'countCommitConflict' | 'observeCommit' | 'trackBacklog'>

interface Pending<I, R> {
  item: I
  resolve(result: R): void
  reject(error: unknown): void
}

/**
 * Group commit: items that arrive while a transaction is being written wait for the next one and
 * share it, so a burst costs one commit (one fsync on SQLite) and one multi-row insert per table,
 * not one per request. Up to `storage.writeTransactions` transactions are written at once (one on
 * SQLite); each takes the items waiting when it starts. `writeAll` must return one result per item, in
 * order. `weigh` gives an item's share of the backlog (the events of a batch, say).
 */
export function createGroupCommitter<I, R>(
  storage: Storage,
  writeAll: (trx: Kysely<Database>, items: I[]) => Promise<R[]>,
  maxItemsPerTransaction: number,
  weigh: (item: I) => number = () => 1,
  /** the write path's name in metrics */
  name = 'writes',
  metrics: CommitMetrics = portalMetrics,
): GroupCommitter<I, R> {
  const { countCommitConflict, observeCommit, trackBacklog } = metrics
  let pending: Pending<I, R>[] = []
  const drainers = new Set<Promise<void>>()
  let backlog = 0
  const untrackBacklog = trackBacklog(name, () => backlog)

  async function drain() {
    // Let the requests already read in this turn of the event loop join the first group.
    await new Promise((resolve) => setImmediate(resolve))
    while (pending.length > 0) {
      const group = pending.slice(0, maxItemsPerTransaction)
      pending = pending.slice(group.length)
      await commit(group)
    }
  }

  function startDrainer() {
    const drainer = drain().finally(() => drainers.delete(drainer))
    drainers.add(drainer)
  }

  async function commit(group: Pending<I, R>[], attempt = 1): Promise<void> {
    try {
      const startedAt = performance.now()
      const results = await storage.db.transaction().execute((trx) => writeAll(trx, group.map((entry) => entry.item)))
      observeCommit(name, group.length, (performance.now() - startedAt) / 1000)
      group.forEach((entry, index) => entry.resolve(results[index]))
    } catch (error) {
      // The database ended this transaction to let a concurrent one through (a deadlock): run it again.
      if (storage.isConflict(error) && attempt < MAX_CONFLICT_ATTEMPTS) {
        countCommitConflict(name)
        return commit(group, attempt + 1)
      }
      // Nor would a database that is down or a pool with no free connection serve them one by one.
      if (group.length === 1 || storage.isUnavailable(error) || error instanceof PoolExhaustedError) return group.forEach((entry) => entry.reject(error))
      // One item the database refuses must not fail the others that shared its transaction.
      for (const entry of group) await commit([entry])
    }
  }

  return {
    write(item) {
      const weight = weigh(item)
      backlog += weight
      return new Promise<R>((resolve, reject) => {
        pending.push({ item, resolve, reject })
        if (drainers.size < storage.writeTransactions) startDrainer()
      }).finally(() => (backlog -= weight))
    },
    get backlog() {
      return backlog
    },
    async close() {
      untrackBacklog()
      while (drainers.size > 0) await Promise.all(drainers)
    },
  }
}
