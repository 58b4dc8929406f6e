import type { EventRow, GroupHoursRow, GroupSummaryRow } from '../module.ts'

/** Row types of the repository module's tables, as its migrations leave them. */
export interface RepositoryTables {
  repository_events: EventRow & { repo: string; branch: string | null; author: string | null }
  repository_branch_summary: GroupSummaryRow<'repo' | 'branch'>
  repository_author_summary: GroupSummaryRow<'author'>
  repository_branch_hours: GroupHoursRow<'repo' | 'branch'>
  repository_author_hours: GroupHoursRow<'author'>
  /** the project's code host, for commit links (links.ts); state, not events */
  repository_links: { project_id: string; provider: string; base_url: string; repo: string | null; updated_at: number }
}
