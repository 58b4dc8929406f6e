import { Type, type Static } from 'typebox'
import { List, PageQuery } from '../../http/list.ts'
import { IsoTime, Nullable, ProjectQuery, eventConditions, givenValues, isoFromMs, latestPerGroup, mapPage, moduleReads, readRoute, requireReadableProject, summaryOf } from '../module-reads.ts'
import type { RepositoryPayload } from './payload.ts'

type RepositoryData = Static<typeof RepositoryPayload>

const Branch = Type.Object({
  repo: Type.String(),
  branch: Nullable(Type.String()),
  provider: Nullable(Type.String()),
  commits: Type.Integer({ description: 'events in the window' }),
  lastCommit: Nullable(Type.String()),
  lastAuthor: Nullable(Type.String()),
  lastPushedAt: IsoTime(),
  eventId: Type.String({ description: 'the latest event' }),
})

const Author = Type.Object({
  author: Type.String(),
  commits: Type.Integer({ description: 'events in the window' }),
  firstCommitAt: IsoTime(),
  lastCommitAt: IsoTime(),
  lastRepo: Type.String(),
  lastBranch: Nullable(Type.String()),
  lastCommit: Nullable(Type.String()),
})

const WindowQuery = {
  ...ProjectQuery,
  repo: Type.Optional(Type.String({ description: 'owner/name' })),
  from: Type.Optional(IsoTime('events at or after')),
  to: Type.Optional(IsoTime('events before')),
  ...PageQuery,
}

export const repositoryReads = moduleReads((app, ctx, module) => {
  app.get(
    '/branches',
    readRoute({
      tag: 'repository',
      summary: 'Commits per repository and branch, most recently pushed first, with the latest commit',
      description: 'The commits themselves: `GET /api/modules/repository/events?repo=…&branch=…`.',
      query: WindowQuery,
      response: List(Branch),
    }),
    async (request) => {
      const { project_id: projectId, repo, from, to, limit, cursor } = request.query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, {
        table: 'repository_events',
        projectId,
        summary: summaryOf(module, 'branches'),
        groups: givenValues({ repo }),
        narrow: eventConditions({}, from, to),
        limit,
        cursor,
      })
      return mapPage(page, (group) => {
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
      })
    },
  )

  app.get(
    '/authors',
    readRoute({
      tag: 'repository',
      summary: 'Commit authors, most recently active first, with their commit counts',
      query: WindowQuery,
      response: List(Author),
    }),
    async (request) => {
      const { project_id: projectId, repo, from, to, limit, cursor } = request.query
      await requireReadableProject(ctx, request, projectId)
      const page = await latestPerGroup(ctx, {
        table: 'repository_events',
        projectId,
        summary: summaryOf(module, 'authors'),
        narrow: eventConditions({ repo }, from, to),
        limit,
        cursor,
      })
      return mapPage(page, (group) => {
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
      })
    },
  )
})
