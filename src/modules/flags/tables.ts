import type { EventRow, GroupSummaryRow } from '../module.ts'

/** Row types of the flags module's tables, as its migrations leave them. */
export interface FlagTables {
  feature_flag_events: EventRow & { flag_key: string; actor: string | null }
  feature_flag_summary: GroupSummaryRow<'flag_key'>
}
