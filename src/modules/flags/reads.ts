import { Type } from 'typebox'
import { List, PageQuery } from '../../http/list.ts'
import {
  IsoTime,
  Nullable,
  ProjectQuery,
  groupWithHistory,
  isoFromMs,
  latestPerGroup,
  mapPage,
  moduleReads,
  readRoute,
  requireReadableProject,
  summaryOf,
  type GroupState,
  type HistoryEvent,
} from '../module-reads.ts'
import type { FeatureFlagPayload } from './payload.ts'
import type { Static } from 'typebox'

type FlagData = Static<typeof FeatureFlagPayload>

const FlagChange = Type.Object({
  eventId: Type.String(),
  changedAt: IsoTime(),
  enabled: Nullable(Type.Boolean()),
  rollout: Nullable(Type.Integer({ description: 'percent, 0–100' })),
  actor: Nullable(Type.String()),
})

const FlagState = Type.Object({
  key: Type.String(),
  enabled: Nullable(Type.Boolean({ description: 'from the latest event; null when it did not say' })),
  rollout: Nullable(Type.Integer({ description: 'percent, 0–100, from the latest event' })),
  actor: Nullable(Type.String({ description: 'who made the latest change' })),
  updatedAt: IsoTime('time of the latest event'),
  changes: Type.Integer({ description: 'events recorded for this flag' }),
  eventId: Type.String({ description: 'the latest event' }),
})

const FlagDetail = Type.Object({ ...FlagState.properties, history: List(FlagChange) })

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
  app.get(
    '/flags',
    readRoute({
      tag: 'flags',
      summary: 'The current state of each feature flag: its latest event by time, most recently changed first',
      query: { ...ProjectQuery, ...PageQuery },
      response: List(FlagState),
    }),
    async (request) => {
      const { project_id: projectId, limit, cursor } = request.query
      await requireReadableProject(ctx, request, projectId)
      return mapPage(await latestPerGroup(ctx, { table: 'feature_flag_events', projectId, summary: summaryOf(module, 'flags'), limit, cursor }), flagState)
    },
  )

  app.get(
    '/flags/:key',
    readRoute({
      tag: 'flags',
      summary: 'One flag’s current state and its history of changes, newest first',
      description: '`limit` and `cursor` page the history. 404 when the project has no event for this key.',
      params: { key: Type.String() },
      query: { ...ProjectQuery, ...PageQuery },
      response: FlagDetail,
    }),
    async (request) => {
      const { project_id: projectId, limit, cursor } = request.query
      const { key } = request.params
      await requireReadableProject(ctx, request, projectId)
      const summary = summaryOf(module, 'flags')
      const { state, history } = await groupWithHistory(ctx, { table: 'feature_flag_events', projectId, summary, column: 'flag_key', value: key, what: `flag ${key}`, limit, cursor })
      return { ...flagState(state), history: mapPage(history, flagChange) }
    },
  )
})
