import { sql } from 'kysely'
import type { Migration } from '../../storage/migrations.ts'
import { createEventTableV1 } from '../../storage/frozen/event-table-v1.ts'
import { createGroupSummaryTableV1 } from '../group-summary-table-v1.ts'
import { addFieldColumnV1 } from '../field-column-v1.ts'

export const videoMigrations: Migration[] = [
  {
    name: 'video/001_video_events',
    up: (db, t) => createEventTableV1(db, t, 'video_events', [['job_id', 'text'], ['status', 'text']], [['job_id'], ['status']]),
  },
  {
    name: 'video/002_job_summary',
    up: (db, t) => createGroupSummaryTableV1(db, t, 'video_job_summary', 'video_events', ['job_id']),
  },
  {
    // The job list shows the latest target and artifact URL any event gave: an index probe per job.
    name: 'video/003_url_columns',
    up: async (db, t) => {
      await addFieldColumnV1(db, t, 'video_events', 'target_url', 'text', 'targetUrl', 'job_id')
      await addFieldColumnV1(db, t, 'video_events', 'artifact_url', 'text', 'artifactUrl', 'job_id')
    },
  },
  {
    // The job list filters by latest status in the summary alone: the events may be in DuckDB, where no join reaches.
    name: 'video/004_job_summary_latest_status',
    up: async (db) => {
      await db.schema.alterTable('video_job_summary').addColumn('latest_status', 'text').execute()
      await sql`update video_job_summary set latest_status = (select status from video_events where video_events.id = video_job_summary.last_event_id)`.execute(db)
    },
  },
]
