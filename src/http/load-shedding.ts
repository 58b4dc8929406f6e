import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Config } from '../config.ts'
import type { GroupCommitter } from '../storage/group-commit.ts'
import type { EventOutbox } from '../storage/event-store.ts'
import { ProblemError } from './problem.ts'

/** The 503 of spec part 7: the portal sheds load and the client retries after `Retry-After`. */
export function overloaded(reason: string, retryAfterSeconds: number): ProblemError {
  return new ProblemError(503, 'overloaded', `the portal is shedding load (${reason}); retry after ${retryAfterSeconds} s`, {
    'retry-after': String(retryAfterSeconds),
  })
}

/**
 * Sheds a write while `committer` has `maxPendingEvents` or more waiting for their commit. The event
 * loop's delay does not see a database that falls behind (the loop idles while it waits), so without
 * this bound requests would queue without end, each holding its batch in memory.
 */
export function refuseWhenBacklogged(committer: Pick<GroupCommitter<unknown, unknown>, 'backlog'>, shedding: Config['loadShedding']): void {
  const { maxPendingEvents, retryAfterSeconds } = shedding
  if (maxPendingEvents > 0 && committer.backlog >= maxPendingEvents) {
    throw overloaded(`events waiting for the database: ${committer.backlog}, limit ${maxPendingEvents}`, retryAfterSeconds)
  }
}

/**
 * Refuses ingest while the event store's outbox holds `maxEvents` or more acknowledged events not yet applied: while
 * DuckDB cannot be written (a full disk), each batch admitted is a backlog the same disk must hold, and reads of it
 * wait for an apply that cannot happen. `database_unavailable` while the store refuses writes, `overloaded` while it is
 * only behind. The count is the outbox's last (refreshed every 250 ms), so a burst may pass the bound by that much.
 */
export function refuseWhenOutboxFull(outbox: EventOutbox | undefined, maxEvents: number, retryAfterSeconds: number): void {
  if (!outbox || maxEvents === 0) return
  const { backlogEvents, unavailable } = outbox.state()
  if (backlogEvents < maxEvents) return
  if (!unavailable) throw overloaded(`events waiting to be applied to the event store: ${backlogEvents}, EVENT_OUTBOX_MAX_EVENTS ${maxEvents}`, retryAfterSeconds)
  throw new ProblemError(
    503,
    'database_unavailable',
    `the event store cannot be written (${unavailable}) and ${backlogEvents} acknowledged events wait for it, EVENT_OUTBOX_MAX_EVENTS ${maxEvents}; retry once it can`,
    { 'retry-after': '5' },
  )
}

const DELAY_RESOLUTION_MS = 10

// Not @fastify/under-pressure: a request through either costs the same (3,082 against 2,913 requests/s through
// fastify.inject, `npm run bench -- libraries` (bench/libraries.ts), 2026-11-27, the shared 2-core development machine under load (two runs)), but it samples heap and RSS too (see below), sheds health with the rest, and has no
// start-up grace; its event-loop check is this one.

/**
 * The event loop's mean delay over the last `intervalMs`. It samples nothing else: reading memory
 * use needs a descriptor, and a sampler that throws when descriptors run out ends the process.
 */
export function eventLoopDelaySampler(intervalMs: number) {
  const histogram = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS })
  histogram.enable()
  let delayMs = 0
  const timer = setInterval(() => {
    // No sample at all in an interval means the loop was blocked for all of it.
    delayMs = Number.isNaN(histogram.mean) ? Infinity : Math.max(0, histogram.mean / 1e6 - DELAY_RESOLUTION_MS)
    histogram.reset()
  }, intervalMs)
  timer.unref()
  return {
    delayMs: () => delayMs,
    stop() {
      clearInterval(timer)
      histogram.disable()
    },
  }
}
