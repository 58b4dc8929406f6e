import type { EventRow, GroupSummaryRow } from '../module.ts'

/** Row types of the configs module's tables, as its migrations leave them. */
export interface ConfigTables {
  config_events: EventRow & { path: string; actor: string | null }
  config_path_summary: GroupSummaryRow<'path'>
}
