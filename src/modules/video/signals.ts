import { sql } from 'kysely'
import type { AlertSignal } from '../../alerts/signal.ts'
import { column, countWindowEvents } from '../../alerts/event-window.ts'

export const videoSignals: AlertSignal[] = [
  {
    name: 'video.failed_jobs',
    description: 'Video job events with status `failed` (any case) in the window',
    unit: 'jobs',
    aggregates: ['count'],
    filters: {},
    dimensions: { job: 'the job id' },
    absentIsZero: true,
    uiSection: 'video',
    evaluate: (ctx, query) =>
      countWindowEvents(ctx, { table: 'video_events', filters: {}, dimensions: { job: column('job_id') }, where: (rows) => rows.where(sql`lower(status)`, '=', 'failed') }, query),
  },
]
