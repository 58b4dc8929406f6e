import type { EventRow } from '../module.ts'

/** Row types of the sessions module's tables, as its migrations leave them. */
export interface SessionTables {
  session_events: EventRow & { release: string; environment: string | null }
  /** one row per session (`sessionId`): the worst state its updates reported */
  session_states: {
    project_id: string
    session_id: string
    release: string
    /** '' when none was named: part of no key, kept as '' for one comparison on both databases */
    environment: string
    /** '' when the session named no user */
    distinct_id: string
    started: number
    status: string
    /** the status's place in SESSION_STATUSES: the upsert keeps the highest */
    status_rank: number
    errors: number
    updated_at: number
  }
  /** sessions counted by end state per bucket, release, environment and user ('' for none) */
  session_aggregates: {
    project_id: string
    release: string
    environment: string
    started: number
    distinct_id: string
    exited: number
    errored: number
    abnormal: number
    crashed: number
  }
}
