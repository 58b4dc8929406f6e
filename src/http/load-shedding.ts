import type { Config } from '../config.ts'
import type { GroupCommitter } from '../storage/group-commit.ts'
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
export function refuseWhenBacklogged(committer: GroupCommitter<any, any>, shedding: Config['loadShedding']): void {
  const { maxPendingEvents, retryAfterSeconds } = shedding
  if (maxPendingEvents > 0 && committer.backlog >= maxPendingEvents) {
    throw overloaded(`events waiting for the database: ${committer.backlog}, limit ${maxPendingEvents}`, retryAfterSeconds)
  }
}
