import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox'
import type { PortalContext } from '../context.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, toPage, type Page } from '../http/list.ts'
import { named, nameOf } from '../http/openapi-components.ts'
import { ProblemError } from '../http/problem.ts'
import { latestPerGroup, summaryOf, type GroupQuery, type GroupState } from './latest-per-group.ts'
import type { EventModule, EventTablesByName } from './module.ts'
import { ProjectQuery, eventsDb, readRoute, requireReadableProject, type ReadsApp } from './read-route.ts'

export interface HistoryEvent {
  id: string
  ts: number
  data: Record<string, unknown>
}

/** What a module's reads of one group summary (its list, one group) share. */
export interface GroupReads<Item extends TObject> {
  /** the list's path; one group's path is below it */
  path: string
  /** the name of the module's summary of these groups */
  groupSummary: string
  /** one group's response item */
  item: Item
  /** the items of a page of groups, given at once so that what the latest events do not repeat is looked up once per page */
  itemsOf(groups: GroupState[], projectId: string): Static<Item>[] | Promise<Static<Item>[]>
}

/** Which groups and events the list's own query parameters select. */
type GroupSelection = Pick<GroupQuery, 'groups' | 'latest' | 'window' | 'narrow'>

/** `GET {path}`: a page of the groups, most recently active first; `filters` are its query parameters besides the project and the page. */
export function groupListRoute<Item extends TObject, Filters extends TProperties = {}>(
  app: ReadsApp,
  ctx: PortalContext,
  module: EventModule,
  spec: GroupReads<Item> & { operationId: string; summary: string; description: string; filters?: Filters; select?: (query: Static<TObject<Filters>>) => GroupSelection },
): void {
  const summary = summaryOf(module, spec.groupSummary)
  // widened because TypeScript cannot follow a generic Item through List; `itemsOf` is checked against Item where it is given
  const response: TSchema = List(spec.item)
  app.get(
    spec.path,
    readRoute({
      operationId: spec.operationId,
      tag: module.name,
      summary: spec.summary,
      description: spec.description,
      query: { ...ProjectQuery, ...spec.filters, ...PageQuery },
      response,
    }),
    async (request) => {
      const query = request.query as Static<TObject<Filters>> & { project_id: string; limit?: number; cursor?: string }
      const { project_id: projectId, limit, cursor } = query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, { table: module.table, projectId, summary, ...spec.select?.(query), limit, cursor })
      return { data: await spec.itemsOf(page.data, projectId), nextCursor: page.nextCursor }
    },
  )
}

/**
 * `GET {path}/:{param}`: one group's item and a page of its events (`eventOf` each), newest first;
 * a 404 naming `what` when the project has no event of it. For summaries of one column, which the
 * parameter gives.
 */
export function groupDetailRoute<Item extends TObject, Event extends TObject>(
  app: ReadsApp,
  ctx: PortalContext,
  module: EventModule,
  spec: GroupReads<Item> & { operationId: string; param: string; what: string; summary: string; description: string; event: Event; eventOf(event: HistoryEvent): Static<Event> },
): void {
  const summary = summaryOf(module, spec.groupSummary)
  const [column, ...more] = summary.columns
  if (more.length > 0) throw new Error(`module ${module.name}: one ${spec.param} cannot name a group of summary ${spec.groupSummary}, which has ${summary.columns.length} columns`)
  // widened as the list's response is
  const detail = Type.Object({ ...spec.item.properties, history: List(spec.event) })
  const itemName = nameOf(spec.item)
  const response: TSchema = itemName === undefined ? detail : named(`${itemName}Detail`, detail)
  app.get(
    `${spec.path}/:${spec.param}`,
    readRoute({
      operationId: spec.operationId,
      tag: module.name,
      summary: spec.summary,
      description: spec.description,
      params: { [spec.param]: Type.String({ description: `the ${spec.what}’s ${spec.param}` }) },
      query: { ...ProjectQuery, ...PageQuery },
      response,
    }),
    async (request) => {
      const { project_id: projectId, limit, cursor } = request.query
      const value = (request.params as Record<string, string>)[spec.param]
      await requireReadableProject(ctx, request, projectId)
      const state = await latestPerGroup(ctx, { table: module.table, projectId, summary, groups: { [column]: value } })
      if (state.data.length === 0) throw new ProblemError(404, 'not_found', `${spec.what} ${value} has no events in project ${projectId}`)
      const [item] = await spec.itemsOf(state.data, projectId)
      return { ...item, history: await groupHistory(ctx, { table: module.table, projectId, column, value, limit, cursor }, spec.eventOf) }
    },
  )
}

/** One group's events (a flag's changes, a job's statuses), newest first, paged like the events list. */
async function groupHistory<T>(
  ctx: PortalContext,
  spec: { table: string; projectId: string; column: string; value: string; limit?: number; cursor?: string },
  eventOf: (event: HistoryEvent) => T,
): Promise<Page<T>> {
  const limit = spec.limit ?? DEFAULT_LIMIT
  const query = eventsDb<EventTablesByName>(ctx, spec.table).selectFrom(spec.table).select(['id', 'ts', 'data']).where('project_id', '=', spec.projectId).where(spec.column, '=', spec.value)
  const rows = await pageAfter(query.select(ctx.storage.eventsOf(spec.table).dataColumns), spec.cursor, limit, 'ts', 'id').execute()
  return toPage(rows, limit, (row) => [Number(row.ts), row.id], (row) => eventOf({ id: row.id, ts: Number(row.ts), data: ctx.storage.eventsOf(spec.table).dataOf(row) }))
}
