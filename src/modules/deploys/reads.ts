import { Type } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { IsoTime, Nullable, moduleReads } from '../read-route.ts'
import { isoFromMs } from '../time-window.ts'
import { givenValues, type GroupState } from '../latest-per-group.ts'
import { groupListRoute } from '../group-routes.ts'

/** Statuses that mark a deploy as failed, compared without regard to case. */
export const FAILED_STATUSES = new Set(['failed', 'failure', 'error', 'errored', 'rolled_back', 'rollback'])

export function isFailedDeploy(status: string | undefined): boolean {
  return FAILED_STATUSES.has((status ?? '').toLowerCase())
}

const LatestDeploy = named('LatestDeploy', Type.Object({
  service: Type.String(),
  environment: Nullable(Type.String()),
  version: Nullable(Type.String()),
  status: Nullable(Type.String()),
  commit: Nullable(Type.String()),
  failed: Type.Boolean({ description: `the latest deploy's status is one of ${[...FAILED_STATUSES].join(', ')} (any case)` }),
  deployedAt: IsoTime('time of the latest deploy'),
  deploys: Type.Integer({ description: 'deploys of this service to this environment' }),
  eventId: Type.String({ description: 'the latest deploy event' }),
}))

function latestDeploy(group: GroupState) {
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
}

export const deployReads = moduleReads((app, ctx, module) => {
  groupListRoute(app, ctx, module, {
    path: '/latest',
    groupSummary: 'latest',
    item: LatestDeploy,
    itemsOf: (groups) => groups.map(latestDeploy),
    operationId: 'listLatestDeploys',
    summary: 'The latest deploy of each service in each environment, most recent first',
    description:
      'One row per (service, environment), with the latest deploy by event time and a `failed` flag. ' +
      'A service’s history is `GET /api/modules/deploys/events?service=…&environment=…`.',
    filters: { service: Type.Optional(Type.String({ description: 'only this service' })), environment: Type.Optional(Type.String({ description: 'only this environment' })) },
    select: ({ service, environment }) => ({ groups: givenValues({ service, environment }) }),
  })
})
