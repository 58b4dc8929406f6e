import type { Kysely } from 'kysely'
import type { Storage } from '../storage/storage.ts'
import { tablesOf, type Connection, type Database } from '../storage/tables.ts'

/** ok → pending → firing → resolved, and error when the evaluation failed (docs/alerts.md). */
export type AlertState = 'ok' | 'pending' | 'firing' | 'resolved' | 'error'
export type Severity = 'warning' | 'critical'

/** Row types of the alerts tables (migrations alerts/001). */
export interface AlertTables {
  alert_rules: {
    id: string
    project_id: string
    /** unique in the project: import matches rules by it */
    name: string
    signal: string
    /** JSON: the rule as the API takes it, less its name and signal */
    definition: unknown
    enabled: number
    interval_seconds: number
    /** when the rule is due; a portal claims it by moving this on with a conditional update */
    next_evaluation_at: number
    /** the end of the latest window whose outcome was applied: an older evaluation that finishes late is dropped */
    evaluated_through: number
    created_at: number
    updated_at: number
  }
  alert_instances: {
    rule_id: string
    /** the dimension's value; '' without `by` */
    series: string
    project_id: string
    state: AlertState
    severity: Severity | null
    value: number | null
    /** when the current state began */
    since: number
    last_notified_at: number | null
    updated_at: number
  }
  alert_history: {
    id: string
    project_id: string
    rule_id: string
    rule_name: string
    series: string
    from_state: AlertState
    to_state: AlertState
    severity: Severity | null
    value: number | null
    threshold: number | null
    window_from: number
    window_to: number
    at: number
    /** the silence that held its notification back */
    silence_id: string | null
    /** the webhook message that carries its notification */
    message_id: string | null
    detail: string | null
  }
  alert_silences: {
    id: string
    project_id: string
    /** null: every rule of the project */
    rule_id: string | null
    /** null: every series */
    series: string | null
    starts_at: number
    ends_at: number
    reason: string
    created_by: string
    created_at: number
  }
  /** written in the transaction of an event an event-driven rule watches (a new error group): that rule is evaluated at once */
  alert_triggers: { id: string; project_id: string; notification_type: string; created_at: number }
}

export type AlertDb = Kysely<Database & AlertTables>

export function alertDb(source: Storage | Connection): AlertDb {
  return tablesOf<AlertTables>('db' in source ? source.db : source)
}
