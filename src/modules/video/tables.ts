import type { EventRow, GroupSummaryRow } from '../module.ts'

/** Row types of the video module's tables, as its migrations leave them. */
export interface VideoTables {
  video_events: EventRow & { job_id: string; status: string | null; target_url: string | null; artifact_url: string | null }
  video_job_summary: GroupSummaryRow<'job_id'> & { latest_status: string | null }
}
