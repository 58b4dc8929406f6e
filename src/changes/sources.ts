import { Type, type Static } from 'typebox'
import { named } from '../http/openapi-components.ts'
import type { PortalContext } from '../context.ts'
import type { EventModule, EventTablesByName } from '../modules/module.ts'
import { modules } from '../modules/registry.ts'
import { isoFromMs } from '../modules/time-window.ts'

export const Change = named('Change', Type.Object({
  kind: Type.String({ description: 'what sort of change: deploy, config, flag, or alert (an alert rule began or stopped firing)' }),
  eventType: Type.String({ description: 'the event type it was recorded as: its module’s events read holds it (`alert`: the rule’s transitions hold it)' }),
  eventId: Type.String({ description: 'the event that recorded it (an alert transition’s id)' }),
  ts: Type.String({ format: 'date-time' }),
  title: Type.String({ description: 'one line that says what changed' }),
  subject: Type.String({ description: 'what changed, as its page finds it: a release, a configuration path, a flag key, an alert rule’s id' }),
  service: Type.Union([Type.String(), Type.Null()]),
  environment: Type.Union([Type.String(), Type.Null()]),
  actor: Type.Union([Type.String(), Type.Null()]),
  commit: Type.Union([Type.String(), Type.Null()]),
}, { description: 'A change that may explain what a chart shows: a deploy, a configuration change, a flag change, an alert firing or resolved.' }))

export type Change = Static<typeof Change>

export interface ChangeWindow {
  projectId: string
  fromMs: number
  toMs: number
  /** at most this many, the newest */
  limit: number
}

/** Where changes come from: every module that declares `changes`, and any source registered beside them. */
export interface ChangeSource {
  kind: string
  read(ctx: PortalContext, window: ChangeWindow): Promise<Change[]>
}

const registeredSources: ChangeSource[] = []

/** Adds a source that is not an event module (alert transitions kept in the state database). */
export function registerChangeSource(source: ChangeSource): void {
  registeredSources.push(source)
}

/** Every source of changes, read from the registry when asked (a module registered at run time counts). */
export function changeSources(): ChangeSource[] {
  return [...modules.filter((module) => module.changes).map(moduleChangeSource), ...registeredSources]
}

function moduleChangeSource(module: EventModule): ChangeSource {
  const markers = module.changes!
  return {
    kind: markers.kind,
    async read(ctx, window) {
      const store = ctx.storage.eventsOf(module.table)
      const rows = await store.db
        .withTables<EventTablesByName>()
        .selectFrom(module.table)
        .select(['id', 'ts', 'data', ...store.dataColumns])
        .where('project_id', '=', window.projectId)
        .where('ts', '>=', window.fromMs)
        .where('ts', '<', window.toMs)
        .orderBy('ts', 'desc')
        .orderBy('id', 'desc')
        .limit(window.limit)
        .execute()
      return rows.map((row) => {
        const described = markers.describe(store.dataOf(row) as never)
        return {
          kind: markers.kind,
          eventType: module.type,
          eventId: String(row.id),
          ts: isoFromMs(row.ts as number),
          title: described.title,
          subject: described.subject,
          service: described.service ?? null,
          environment: described.environment ?? null,
          actor: described.actor ?? null,
          commit: described.commit ?? null,
        }
      })
    },
  }
}
