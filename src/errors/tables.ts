import type { Kysely } from 'kysely'
import type { EventRow } from '../modules/module.ts'
import { tablesOf, type Connection, type Database } from '../storage/tables.ts'

export type GroupStatus = 'unresolved' | 'resolved' | 'ignored'

/** A row of `error_groups`: a group's triage state and its totals as last folded (see `foldCounts`). */
export interface GroupRow {
  id: string
  project_id: string
  /** the fingerprint the group is known by */
  fingerprint: string
  name: string
  message: string
  status: GroupStatus
  /** 1 when an occurrence reopened it after it was resolved, until the next triage */
  regressed: number
  count: number
  first_seen: number
  last_seen: number
  status_changed_at: number | null
  created_at: number
  /** the grouping algorithm version that opened it (errors/006; v1 before) */
  algorithm: string
  /** how a resolved group stays resolved (errors/008): null for any occurrence, or only occurrences of the releases in `error_group_resolution_releases` */
  resolved_in: ResolvedIn | null
  /** the release it was resolved in (`resolved_in` release), or the project's newest when it was resolved in the next release */
  resolved_release: string | null
  /** an ignored group returns to unresolved at this time (epoch ms) */
  ignored_until: number | null
  /** an ignored group returns to unresolved when its count reaches this */
  ignored_until_count: number | null
  /** an ignored group returns to unresolved when its users affected reach this */
  ignored_until_users: number | null
  /** 1 when its ignore condition was reached and it returned to unresolved, until the next triage */
  unignored: number
}

/** Resolved in the next release (after those the project's errors named), or in a named release. */
export type ResolvedIn = 'next_release' | 'release'

/** Occurrences counted, and when the first and the last of them happened. */
export type Totals = { count: number; first_seen: number; last_seen: number }

/**
 * Row types of the errors module's tables (migrations errors/001 to 008 and 100). Bigint columns read as
 * numbers on both databases (the PostgreSQL pool parses int8); a `sum` of them is PostgreSQL's numeric, a string.
 */
export interface ErrorTables {
  error_events: EventRow & { name: string | null; environment: string | null; release: string | null }
  error_groups: GroupRow
  /** a fingerprint's group and why it hashed as it did; only its group ever changes (merge, unmerge) */
  error_fingerprints: { fingerprint: string; project_id: string; group_id: string; algorithm: string; components: unknown }
  error_fingerprint_days: { fingerprint: string; day: number; group_id: string } & Totals
  /** per fingerprint, one row for each `key` (environment, release, service) and value an occurrence named */
  error_fingerprint_tags: { fingerprint: string; key: string; value: string; group_id: string } & Totals
  error_occurrences: {
    id: string
    project_id: string
    group_id: string
    fingerprint: string
    ts: number
    received_at: number
    name: string
    message: string
    stack: string | null
    /** JSON: the structured frames as given, or null */
    frames: unknown
    release: string | null
    environment: string | null
    service: string | null
    /** JSON, or null */
    request: unknown
    /** JSON: the capture's fields beyond the known ones */
    metadata: unknown
    /** null for occurrences stored before errors/004 */
    trace_id: string | null
    /** JSON: the newest breadcrumbs before it, oldest first, or null (errors/006) */
    breadcrumbs: unknown
    span_id: string | null
    /** who reported it, comma-separated when two reports of it were merged: `sentry`, `opentelemetry` */
    reported_by: string | null
  }
  /** who a group is assigned to (errors/100) */
  error_group_assignees: { group_id: string; assignee: string; assigned_by: string; assigned_at: number }
  /** the releases whose occurrences leave a group resolved in a release resolved (errors/008) */
  error_group_resolution_releases: { group_id: string; release: string }
  /** occurrences a group gave up (`trimOccurrences`), counted per minute (`ts`), user and value of what error signals filter by (errors/009) */
  error_trimmed_minutes: {
    id: string
    project_id: string
    group_id: string
    fingerprint: string
    ts: number
    environment: string | null
    release: string | null
    service: string | null
    /** the capture's `level` (Sentry's, kept in an occurrence's metadata) */
    level: string | null
    /** the user as `errors.users` names one (user.id, else user.email, else user.ip_address), or null */
    user_key: string | null
    events: number
  }
  /** counts appended by captures, folded into the group, day and tag rows by `foldCounts` */
  error_count_deltas: {
    project_id: string
    group_id: string
    fingerprint: string
    day: number
    environment: string | null
    release: string | null
    service: string | null
    name: string
    message: string
    /** JSON object of the occurrences' other tag keys and values (Sentry tags as `tags.NAME`, the user as `user`), or null */
    tags: string | null
    /** 1: adds to tag rows only, never to the group's or day's counts (a merged second report) */
    enriches: number
  } & Totals
}

export type ErrorDb = Kysely<Database & ErrorTables>

/** `connection` typed with the portal's tables and the errors module's. */
export function errorDb(connection: Connection): ErrorDb {
  return tablesOf<ErrorTables>(connection)
}
