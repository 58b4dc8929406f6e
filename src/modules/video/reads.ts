import { Type, type Static } from 'typebox'
import { List, PageQuery } from '../../http/list.ts'
import type { PortalContext } from '../../context.ts'
import {
  IsoTime,
  Nullable,
  ProjectQuery,
  groupWithHistory,
  isoFromMs,
  latestKnownValues,
  latestPerGroup,
  mapPage,
  moduleReads,
  readRoute,
  requireReadableProject,
  givenValues,
  summaryOf,
  type GroupState,
  type HistoryEvent,
} from '../module-reads.ts'
import type { VideoPayload } from './payload.ts'

type VideoData = Static<typeof VideoPayload>

const JobEvent = Type.Object({ eventId: Type.String(), ts: IsoTime(), status: Nullable(Type.String()), artifactUrl: Nullable(Type.String()) })

const Job = Type.Object({
  jobId: Type.String(),
  status: Nullable(Type.String({ description: 'from the latest event' })),
  targetUrl: Nullable(Type.String({ description: 'the latest target URL any event of the job gave' })),
  artifactUrl: Nullable(Type.String({ description: 'the latest artifact URL any event of the job gave' })),
  createdAt: IsoTime('time of the job’s first event'),
  updatedAt: IsoTime('time of the job’s latest event'),
  events: Type.Integer(),
  eventId: Type.String({ description: 'the latest event' }),
})

const JobDetail = Type.Object({ ...Job.properties, history: List(JobEvent) })

const TABLE = 'video_events'

/** Jobs with their latest status, and the latest target and artifact URLs, which often come on earlier events. */
async function jobsOf(ctx: PortalContext, projectId: string, groups: GroupState[]) {
  const jobIds = groups.map((group) => String(group.key.job_id))
  const known = (field: string) => latestKnownValues(ctx, { table: TABLE, projectId, column: 'job_id', groups, field })
  const [targets, artifacts] = await Promise.all([known('targetUrl'), known('artifactUrl')])
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
  app.get(
    '/jobs',
    readRoute({
      tag: 'video',
      summary: 'Video jobs with their latest status and artifact, most recently updated first',
      query: { ...ProjectQuery, status: Type.Optional(Type.String({ description: 'only jobs whose latest status is this' })), ...PageQuery },
      response: List(Job),
    }),
    async (request) => {
      const { project_id: projectId, status, limit, cursor } = request.query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, {
        table: TABLE,
        projectId,
        summary: summaryOf(module, 'jobs'),
        latest: givenValues({ status }),
        limit,
        cursor,
      })
      return { data: await jobsOf(ctx, projectId, page.data), nextCursor: page.nextCursor }
    },
  )

  app.get(
    '/jobs/:jobId',
    readRoute({
      tag: 'video',
      summary: 'One video job: its latest status and artifact, and its history newest first',
      description: '`limit` and `cursor` page the history. 404 when the project has no event for this job.',
      params: { jobId: Type.String() },
      query: { ...ProjectQuery, ...PageQuery },
      response: JobDetail,
    }),
    async (request) => {
      const { project_id: projectId, limit, cursor } = request.query
      const { jobId } = request.params
      await requireReadableProject(ctx, request, projectId)
      const summary = summaryOf(module, 'jobs')
      const { state, history } = await groupWithHistory(ctx, { table: TABLE, projectId, summary, column: 'job_id', value: jobId, what: `video job ${jobId}`, limit, cursor })
      const [job] = await jobsOf(ctx, projectId, [state])
      return { ...job, history: mapPage(history, jobEvent) }
    },
  )
})
