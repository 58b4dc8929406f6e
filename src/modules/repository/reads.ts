import { Type, type Static } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { IsoTime, Nullable, moduleReads } from '../read-route.ts'
import { isoFromMs, TimeWindowQuery } from '../time-window.ts'
import { eventConditions, givenValues, type GroupState } from '../latest-per-group.ts'
import { groupListRoute } from '../group-routes.ts'
import type { RepositoryPayload } from './payload.ts'
import { repositoryLinkRoutes } from './links.ts'

type RepositoryData = Static<typeof RepositoryPayload>

const Branch = named('RepositoryBranch', Type.Object({
  repo: Type.String(),
  branch: Nullable(Type.String()),
  provider: Nullable(Type.String()),
  commits: Type.Integer({ description: 'events in the window' }),
  lastCommit: Nullable(Type.String()),
  lastAuthor: Nullable(Type.String()),
  lastPushedAt: IsoTime(),
  eventId: Type.String({ description: 'the latest event' }),
}))

const Author = named('RepositoryAuthor', Type.Object({
  author: Type.String(),
  commits: Type.Integer({ description: 'events in the window' }),
  firstCommitAt: IsoTime(),
  lastCommitAt: IsoTime(),
  lastRepo: Type.String(),
  lastBranch: Nullable(Type.String()),
  lastCommit: Nullable(Type.String()),
}))

/** The query parameters of both lists: one repository, a time window. */
const WindowFilters = {
  repo: Type.Optional(Type.String({ description: 'owner/name' })),
  ...TimeWindowQuery('events'),
}

function branch(group: GroupState) {
  const data = group.latest.data as RepositoryData
  return {
    repo: String(group.key.repo),
    branch: group.key.branch,
    provider: data.provider ?? null,
    commits: group.events,
    lastCommit: data.commit ?? null,
    lastAuthor: data.author ?? null,
    lastPushedAt: isoFromMs(group.lastTs),
    eventId: group.latest.id,
  }
}

function author(group: GroupState) {
  const data = group.latest.data as RepositoryData
  return {
    author: String(group.key.author),
    commits: group.events,
    firstCommitAt: isoFromMs(group.firstTs),
    lastCommitAt: isoFromMs(group.lastTs),
    lastRepo: data.repo,
    lastBranch: data.branch ?? null,
    lastCommit: data.commit ?? null,
  }
}

export const repositoryReads = moduleReads((app, ctx, module) => {
  repositoryLinkRoutes(app, ctx)
  groupListRoute(app, ctx, module, {
    path: '/branches',
    groupSummary: 'branches',
    item: Branch,
    itemsOf: (groups) => groups.map(branch),
    operationId: 'listRepositoryBranches',
    summary: 'Commits per repository and branch, most recently pushed first, with the latest commit',
    description: 'The commits themselves: `GET /api/modules/repository/events?repo=…&branch=…`.',
    filters: WindowFilters,
    // a branch's group names its repository: `repo` picks groups, where for authors it picks events
    select: ({ repo, from, to }) => ({ groups: givenValues({ repo }), window: { from, to } }),
  })
  groupListRoute(app, ctx, module, {
    path: '/authors',
    groupSummary: 'authors',
    item: Author,
    itemsOf: (groups) => groups.map(author),
    operationId: 'listRepositoryAuthors',
    summary: 'Commit authors, most recently active first, with their commit counts',
    description: 'One row per author with a commit in the project; their commits: `GET /api/modules/repository/events?author=…`.',
    filters: WindowFilters,
    select: ({ repo, from, to }) => ({ window: { from, to }, narrow: eventConditions({ repo }) }),
  })
})
