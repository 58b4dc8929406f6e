import { Type, type Static } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { IsoTime, Nullable, moduleReads } from '../read-route.ts'
import { isoFromMs, TimeWindowQuery } from '../time-window.ts'
import { eventConditions, type GroupState } from '../latest-per-group.ts'
import { groupListRoute } from '../group-routes.ts'
import type { ConfigPayload } from './payload.ts'

type ConfigData = Static<typeof ConfigPayload>

const ConfigPath = named('ConfigPath', Type.Object({
  path: Type.String(),
  changes: Type.Integer({ description: 'changes in the window (by `actor` when given)' }),
  firstChangedAt: IsoTime(),
  lastChangedAt: IsoTime(),
  lastActor: Nullable(Type.String()),
  lastDiff: Nullable(Type.String({ description: 'the unified diff of the latest change' })),
  eventId: Type.String({ description: 'the latest change' }),
}))

function configPath(group: GroupState) {
  const data = group.latest.data as ConfigData
  return {
    path: String(group.key.path),
    changes: group.events,
    firstChangedAt: isoFromMs(group.firstTs),
    lastChangedAt: isoFromMs(group.lastTs),
    lastActor: data.actor ?? null,
    lastDiff: data.diff ?? null,
    eventId: group.latest.id,
  }
}

export const configReads = moduleReads((app, ctx, module) => {
  groupListRoute(app, ctx, module, {
    path: '/paths',
    groupSummary: 'paths',
    item: ConfigPath,
    itemsOf: (groups) => groups.map(configPath),
    operationId: 'listConfigPaths',
    summary: 'Changed configuration paths, most recently changed first, with the latest change’s actor and diff',
    description: 'Every change of one path, with its diff: `GET /api/modules/configs/events?path=…`. With `actor`: what that actor changed.',
    filters: {
      actor: Type.Optional(Type.String({ description: 'only changes by this actor' })),
      ...TimeWindowQuery('changes'),
    },
    select: ({ actor, from, to }) => ({ window: { from, to }, narrow: eventConditions({ actor }) }),
  })
})
