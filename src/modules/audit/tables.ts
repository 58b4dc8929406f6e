import type { EventRow, GroupSummaryRow } from '../module.ts'

/** Row types of the audit module's tables, as its migrations leave them. */
export interface AuditTables {
  audit_events: EventRow & { actor: string; action: string | null; resource: string | null; status_code: number | null }
  audit_actor_summary: GroupSummaryRow<'actor'>
}
