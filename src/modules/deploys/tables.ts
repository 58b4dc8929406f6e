import type { EventRow, GroupSummaryRow } from '../module.ts'

/** Row types of the deploys module's tables, as its migrations leave them. */
export interface DeployTables {
  deploy_events: EventRow & { service: string; environment: string | null; status: string | null; version: string | null }
  deploy_target_summary: GroupSummaryRow<'service' | 'environment'>
}
