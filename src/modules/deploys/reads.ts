import { Type } from 'typebox'
import { List, PageQuery } from '../../http/list.ts'
import { IsoTime, Nullable, ProjectQuery, givenValues, isoFromMs, latestPerGroup, mapPage, moduleReads, readRoute, requireReadableProject, summaryOf } from '../module-reads.ts'

/** Statuses that mark a deploy as failed, compared without regard to case. */
const FAILED_STATUSES = new Set(['failed', 'failure', 'error', 'errored', 'rolled_back', 'rollback'])

export function isFailedDeploy(status: string | undefined): boolean {
  return FAILED_STATUSES.has((status ?? '').toLowerCase())
}

const LatestDeploy = Type.Object({
  service: Type.String(),
  environment: Nullable(Type.String()),
  version: Nullable(Type.String()),
  status: Nullable(Type.String()),
  commit: Nullable(Type.String()),
  failed: Type.Boolean({ description: `the latest deploy's status is one of ${[...FAILED_STATUSES].join(', ')} (any case)` }),
  deployedAt: IsoTime('time of the latest deploy'),
  deploys: Type.Integer({ description: 'deploys of this service to this environment' }),
  eventId: Type.String({ description: 'the latest deploy event' }),
})

export const deployReads = moduleReads((app, ctx, module) => {
  app.get(
    '/latest',
    readRoute({
      tag: 'deploys',
      summary: 'The latest deploy of each service in each environment, most recent first',
      description:
        'One row per (service, environment), with the latest deploy by event time and a `failed` flag. ' +
        'A service’s history is `GET /api/modules/deploys/events?service=…&environment=…`.',
      query: {
        ...ProjectQuery,
        service: Type.Optional(Type.String()),
        environment: Type.Optional(Type.String()),
        ...PageQuery,
      },
      response: List(LatestDeploy),
    }),
    async (request) => {
      const { project_id: projectId, service, environment, limit, cursor } = request.query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, {
        table: 'deploy_events',
        projectId,
        summary: summaryOf(module, 'latest'),
        groups: givenValues({ service, environment }),
        limit,
        cursor,
      })
      return mapPage(page, (group) => {
        const data = group.latest.data as { version?: string; status?: string; commit?: string }
        return {
          service: String(group.key.service),
          environment: group.key.environment,
          version: data.version ?? null,
          status: data.status ?? null,
          commit: data.commit ?? null,
          failed: isFailedDeploy(data.status),
          deployedAt: isoFromMs(group.latest.ts),
          deploys: group.events,
          eventId: group.latest.id,
        }
      })
    },
  )
})
