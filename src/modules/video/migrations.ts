import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'

export const videoMigrations: Migration[] = [
  {
    name: 'video/001_video_events',
    up: (db, t) => createEventTableV1(db, t, 'video_events', [['job_id', 'text'], ['status', 'text']], [['job_id'], ['status']]),
  },
  {
    name: 'video/002_job_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'video_job_summary', 'video_events', ['job_id']),
  },
]
