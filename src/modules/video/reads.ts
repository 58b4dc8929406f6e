import { Type, type Static } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import type { PortalContext } from '../../context.ts'
import { IsoTime, Nullable, moduleReads } from '../read-route.ts'
import { isoFromMs } from '../time-window.ts'
import { givenValues, latestKnownValues, type GroupState } from '../latest-per-group.ts'
import { groupDetailRoute, groupListRoute, type HistoryEvent } from '../group-routes.ts'
import type { VideoPayload } from './payload.ts'

type VideoData = Static<typeof VideoPayload>

const JobEvent = named('VideoJobEvent', Type.Object({ eventId: Type.String(), ts: IsoTime(), status: Nullable(Type.String()), artifactUrl: Nullable(Type.String()) }))

const Job = named('VideoJob', Type.Object({
  jobId: Type.String(),
  status: Nullable(Type.String({ description: 'from the latest event' })),
  targetUrl: Nullable(Type.String({ description: 'the latest target URL any event of the job gave' })),
  artifactUrl: Nullable(Type.String({ description: 'the latest artifact URL any event of the job gave' })),
  createdAt: IsoTime('time of the job’s first event'),
  updatedAt: IsoTime('time of the job’s latest event'),
  events: Type.Integer(),
  eventId: Type.String({ description: 'the latest event' }),
}))

/** Jobs with their latest status, and the latest target and artifact URLs, which often come on earlier events. */
async function jobsOf(ctx: PortalContext, projectId: string, groups: GroupState[]) {
  const known = (field: string, fieldColumn: string) => latestKnownValues(ctx, { table: 'video_events', projectId, column: 'job_id', groups, field, fieldColumn })
  const [targets, artifacts] = await Promise.all([known('targetUrl', 'target_url'), known('artifactUrl', 'artifact_url')])
  return groups.map((group) => {
    const jobId = String(group.key.job_id)
    return {
      jobId,
      status: (group.latest.data as VideoData).status ?? null,
      targetUrl: (targets.get(jobId) as string | undefined) ?? null,
      artifactUrl: (artifacts.get(jobId) as string | undefined) ?? null,
      createdAt: isoFromMs(group.firstTs),
      updatedAt: isoFromMs(group.latest.ts),
      events: group.events,
      eventId: group.latest.id,
    }
  })
}

function jobEvent(event: HistoryEvent) {
  const data = event.data as VideoData
  return { eventId: event.id, ts: isoFromMs(event.ts), status: data.status ?? null, artifactUrl: data.artifactUrl ?? null }
}

export const videoReads = moduleReads((app, ctx, module) => {
  const jobs = { path: '/jobs', groupSummary: 'jobs', item: Job, itemsOf: (groups: GroupState[], projectId: string) => jobsOf(ctx, projectId, groups) }
  groupListRoute(app, ctx, module, {
    ...jobs,
    operationId: 'listVideoJobs',
    summary: 'Video jobs with their latest status and artifact, most recently updated first',
    description: 'One row per `jobId`; one job’s history: `GET /api/video/jobs/{jobId}`.',
    filters: { status: Type.Optional(Type.String({ description: 'only jobs whose latest status is this' })) },
    select: ({ status }) => ({ latest: givenValues({ status }) }),
  })
  groupDetailRoute(app, ctx, module, {
    ...jobs,
    param: 'jobId',
    what: 'video job',
    operationId: 'getVideoJob',
    summary: 'One video job: its latest status and artifact, and its history newest first',
    description: '`limit` and `cursor` page the history. 404 when the project has no event for this job.',
    event: JobEvent,
    eventOf: jobEvent,
  })
})
