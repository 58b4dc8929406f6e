import { Type, type Static } from 'typebox'
import type { Kysely } from 'kysely'
import { named } from '../../http/openapi-components.ts'
import { accessPrincipal } from '../../http/auth.ts'
import { problemResponses } from '../../http/problem.ts'
import { findProject } from '../../projects/store.ts'
import { recordManagementAction } from '../audit/record.ts'
import { ProjectQuery, moduleDb, type ReadsApp } from '../read-route.ts'
import type { PortalContext } from '../../context.ts'
import type { Database } from '../../storage/tables.ts'
import type { RepositoryTables } from './tables.ts'
import { RepoName } from '../fields.ts'

/**
 * Where a project's commits are browsed: a code host and its address, from which every commit and compare
 * link is made. The paths are each host's own (GitHub and Gitea `/commit/`, GitLab `/-/commit/`).
 */
const HOSTS = {
  github: { commit: '/{repo}/commit/{commit}', compare: '/{repo}/compare/{from}...{to}' },
  gitlab: { commit: '/{repo}/-/commit/{commit}', compare: '/{repo}/-/compare/{from}...{to}' },
  gitea: { commit: '/{repo}/commit/{commit}', compare: '/{repo}/compare/{from}...{to}' },
} as const

type Host = keyof typeof HOSTS

const HostName = Type.Union(
  [Type.Literal('github'), Type.Literal('gitlab'), Type.Literal('gitea')],
  { description: 'the code host, which decides the paths of commit and compare pages' },
)

const RepositoryLinksInput = named('RepositoryLinksInput', Type.Object({
  provider: HostName,
  baseUrl: Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', description: 'the host’s address, without the repository: `https://github.com`, `https://gitlab.example.com`', examples: ['https://github.com'] }),
  repo: Type.Optional(RepoName()),
}, { additionalProperties: false, examples: [{ provider: 'github', baseUrl: 'https://github.com', repo: 'acme/checkout' }] }))

export const RepositoryLinks = named('RepositoryLinks', Type.Object({
  projectId: Type.String(),
  provider: Type.Union([HostName, Type.Null()], { description: 'null until an admin sets it: commits are then shown without links' }),
  baseUrl: Type.Union([Type.String(), Type.Null()]),
  repo: Type.Union([Type.String(), Type.Null()], { description: 'the repository of commits that name none (a deploy’s): the one set, else the one most recently pushed to' }),
  commitUrl: Type.Union([Type.String(), Type.Null()], { description: 'a commit’s page, with `{repo}` (owner/name, as repository events give it) and `{commit}` to fill in' }),
  compareUrl: Type.Union([Type.String(), Type.Null()], { description: 'the commits between two, with `{repo}`, `{from}` and `{to}` to fill in' }),
}, { description: 'How a project’s commits link to its code host (a project setting: admins change it, and each change is audited).' }))

export type RepositoryLinks = Static<typeof RepositoryLinks>

type LinksDb = Kysely<Database & RepositoryTables>

export async function readRepositoryLinks(db: LinksDb, projectId: string): Promise<RepositoryLinks> {
  const row = await db.selectFrom('repository_links').select(['provider', 'base_url', 'repo']).where('project_id', '=', projectId).executeTakeFirst()
  const pushed = await db.selectFrom('repository_branch_summary').select('repo').where('project_id', '=', projectId).orderBy('last_ts', 'desc').limit(1).executeTakeFirst()
  const repo = row?.repo ?? pushed?.repo ?? null
  if (!row || !(row.provider in HOSTS)) return { projectId, provider: null, baseUrl: null, repo, commitUrl: null, compareUrl: null }
  const host = HOSTS[row.provider as Host]
  const base = row.base_url.replace(/\/+$/, '')
  return { projectId, provider: row.provider as Host, baseUrl: base, repo, commitUrl: base + host.commit, compareUrl: base + host.compare }
}

/** A commit's page, or null without a setting. */
export function commitUrl(links: RepositoryLinks, repo: string | null, commit: string): string | null {
  if (!links.commitUrl || !repo) return null
  return links.commitUrl.replace('{repo}', repo).replace('{commit}', encodeURIComponent(commit))
}

/** The page of the commits between two, or null without a setting. */
export function compareUrl(links: RepositoryLinks, repo: string | null, from: string, to: string): string | null {
  if (!links.compareUrl || !repo) return null
  return links.compareUrl.replace('{repo}', repo).replace('{from}', encodeURIComponent(from)).replace('{to}', encodeURIComponent(to))
}

/** `GET` and `PUT {basePath}/links`: read by any access token; set by an admin, audited in the project. */
export function repositoryLinkRoutes(app: ReadsApp, ctx: PortalContext) {
  const db = moduleDb<RepositoryTables>(ctx)
  app.get(
    '/links',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'getRepositoryLinks',
        tags: ['repository'],
        summary: 'How the project’s commits link to its code host',
        description: 'Templates of a commit’s page and of a compare page; the web UI makes every commit it shows a link with them.',
        querystring: Type.Object(ProjectQuery, { additionalProperties: false }),
        response: { 200: RepositoryLinks, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const project = await findProject(ctx.storage.db, accessPrincipal(request).orgId, request.query.project_id)
      return readRepositoryLinks(db, project.id)
    },
  )
  app.put(
    '/links',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'putRepositoryLinks',
        tags: ['repository'],
        summary: 'Set the code host the project’s commits link to (GitHub, GitLab or Gitea)',
        description: 'Replaces the setting; the change is written to the project’s audit module (`repository.links_updated`).',
        querystring: Type.Object(ProjectQuery, { additionalProperties: false }),
        body: RepositoryLinksInput,
        response: { 200: RepositoryLinks, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const project = await findProject(ctx.storage.db, principal.orgId, request.query.project_id)
      const { provider, baseUrl, repo = null } = request.body
      await db.transaction().execute(async (trx) => {
        const before = await readRepositoryLinks(trx, project.id)
        await trx.deleteFrom('repository_links').where('project_id', '=', project.id).execute()
        await trx.insertInto('repository_links').values({ project_id: project.id, provider, base_url: baseUrl, repo, updated_at: Date.now() }).execute()
        await recordManagementAction(trx, ctx, project.id, principal, 'repository.links_updated', project.id, { from: { provider: before.provider, baseUrl: before.baseUrl }, to: { provider, baseUrl, repo } })
      })
      return readRepositoryLinks(db, project.id)
    },
  )
}
