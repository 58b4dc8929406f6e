import { Type, type Static } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { IsoTime, Nullable, moduleReads } from '../read-route.ts'
import { isoFromMs } from '../time-window.ts'
import { type GroupState } from '../latest-per-group.ts'
import { groupDetailRoute, groupListRoute, type HistoryEvent } from '../group-routes.ts'
import type { FeatureFlagPayload } from './payload.ts'

type FlagData = Static<typeof FeatureFlagPayload>

const FlagChange = named('FlagChange', Type.Object({
  eventId: Type.String(),
  changedAt: IsoTime(),
  enabled: Nullable(Type.Boolean()),
  rollout: Nullable(Type.Integer({ description: 'percent, 0–100' })),
  actor: Nullable(Type.String()),
}))

const FlagState = named('FlagState', Type.Object({
  key: Type.String(),
  enabled: Nullable(Type.Boolean({ description: 'from the latest event; null when it did not say' })),
  rollout: Nullable(Type.Integer({ description: 'percent, 0–100, from the latest event' })),
  actor: Nullable(Type.String({ description: 'who made the latest change' })),
  updatedAt: IsoTime('time of the latest event'),
  changes: Type.Integer({ description: 'events recorded for this flag' }),
  eventId: Type.String({ description: 'the latest event' }),
}))

function flagState(group: GroupState) {
  const data = group.latest.data as FlagData
  return {
    key: String(group.key.flag_key),
    enabled: data.enabled ?? null,
    rollout: data.rollout ?? null,
    actor: data.actor ?? null,
    updatedAt: isoFromMs(group.latest.ts),
    changes: group.events,
    eventId: group.latest.id,
  }
}

function flagChange(event: HistoryEvent) {
  const data = event.data as FlagData
  return { eventId: event.id, changedAt: isoFromMs(event.ts), enabled: data.enabled ?? null, rollout: data.rollout ?? null, actor: data.actor ?? null }
}

export const flagReads = moduleReads((app, ctx, module) => {
  const flags = { path: '/flags', groupSummary: 'flags', item: FlagState, itemsOf: (groups: GroupState[]) => groups.map(flagState) }
  groupListRoute(app, ctx, module, {
    ...flags,
    operationId: 'listFeatureFlags',
    summary: 'The current state of each feature flag: its latest event by time, most recently changed first',
    description: 'One row per flag key; the changes of one flag: `GET /api/flags/flags/{key}`.',
  })
  groupDetailRoute(app, ctx, module, {
    ...flags,
    param: 'key',
    what: 'flag',
    operationId: 'getFeatureFlag',
    summary: 'One flag’s current state and its history of changes, newest first',
    description: '`limit` and `cursor` page the history. 404 when the project has no event for this key.',
    event: FlagChange,
    eventOf: flagChange,
  })
})
