import { Type } from 'typebox'
import { columnEquals, defineModule } from '../module.ts'
import { VideoPayload, videoExamples } from './payload.ts'
import { videoMigrations } from './migrations.ts'
import { videoReads } from './reads.ts'
import { videoSignals } from './signals.ts'

export const videoModule = defineModule({
  type: 'video',
  name: 'video',
  basePath: '/api/video',
  payload: VideoPayload,
  examples: videoExamples,
  table: 'video_events',
  columnar: true,
  migrations: videoMigrations,
  columns: (d) => ({ job_id: d.jobId, status: d.status ?? null, target_url: d.targetUrl ?? null, artifact_url: d.artifactUrl ?? null }),
  filters: {
    job_id: columnEquals('job_id', Type.String()),
    status: columnEquals('status', Type.String()),
  },
  summaries: {
    jobs: { table: 'video_job_summary', columns: ['job_id'], latest: ['status'] },
  },
  signals: videoSignals,
  routes: videoReads,
})
