import type { EventRow, GroupHoursRow, GroupSummaryRow } from '../module.ts'

/** Row types of the configs module's tables, as its migrations leave them. */
export interface ConfigTables {
  config_events: EventRow & { path: string; actor: string | null }
  config_path_summary: GroupSummaryRow<'path'>
  config_path_hours: GroupHoursRow<'path'>
}
