import { Type, type Static } from 'typebox'
import type { TObject, TString } from 'typebox'
import type { ReadsApp } from '../modules/read-route.ts'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { named } from '../http/openapi-components.ts'
import { problemResponses } from '../http/problem.ts'
import type { EventTablesByName } from '../modules/module.ts'
import { deploysModule } from '../modules/deploys/module.ts'
import { repositoryModule } from '../modules/repository/module.ts'
import { commitUrl, compareUrl, readRepositoryLinks } from '../modules/repository/links.ts'
import { isoFromMs } from '../modules/time-window.ts'
import { tablesOf } from '../storage/tables.ts'
import type { RepositoryTables } from '../modules/repository/tables.ts'
import { describeGroups, findFoldedGroup, recentOccurrences } from './group-reads.ts'
import { errorDb } from './tables.ts'

const DAY_MS = 86_400_000
/** How far before the previous deploy a commit range may start: commits are made before they are deployed. */
const COMMITS_BEFORE_DEPLOY_MS = 30 * DAY_MS
const MAX_DEPLOYS_READ = 2000
const MAX_COMMITS_READ = 2000
const OCCURRENCES_FOR_FRAMES = 20
/** A deploy's commit and a repository event's name the same commit when one starts with the other, from this length (short SHAs). */
const MIN_SHA_PREFIX = 7

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

const DeployRef = Type.Object({
  eventId: Type.String(),
  ts: Type.String({ format: 'date-time' }),
  service: Type.String(),
  environment: Nullable(Type.String()),
  release: Type.String({ description: 'its `release`, else its `version`' }),
  commit: Nullable(Type.String()),
})

const SuspectCommit = named('SuspectCommit', Type.Object({
  commit: Type.String(),
  repo: Type.String(),
  branch: Nullable(Type.String()),
  author: Nullable(Type.String()),
  message: Nullable(Type.String()),
  ts: Type.String({ format: 'date-time' }),
  eventId: Type.String({ description: 'the repository event that recorded it' }),
  files: Type.Array(Type.String(), { description: 'the paths it touched, as its repository event listed them' }),
  matchedFiles: Type.Array(Type.String(), { description: 'those among them that are files of the group’s in-app frames: the reason it ranks first' }),
  url: Nullable(Type.String({ description: 'its page on the code host (GET /api/modules/repository/links); null until an admin sets one' })),
}))

export const SuspectCommits = named('SuspectCommits', Type.Object({
  release: Nullable(Type.String({ description: 'the first release the group was seen in' })),
  releaseDeploy: Nullable(DeployRef),
  previousDeploy: Nullable(DeployRef),
  basis: Type.Union([Type.Literal('commits'), Type.Literal('time'), Type.Literal('none')], {
    description:
      '`commits`: the commits after the previous deploy’s commit up to the release’s, on the release commit’s branch; `time`: the commits pushed between the two deploys (a deploy’s commit is not among the repository events); `none`: nothing to go on',
  }),
  reason: Type.String({ description: 'why the list is what it is, in a sentence' }),
  inAppFiles: Type.Array(Type.String(), { description: 'files of the in-app frames of the group’s recent occurrences' }),
  compareUrl: Nullable(Type.String({ description: 'the code host’s page of every commit between the two deploys' })),
  data: Type.Array(SuspectCommit, { description: 'commits that touched an in-app file first (most such files first), then the newest first' }),
}, { description: 'The commits that may have introduced a group: those shipped by the first release it was seen in.' }))

type DeployRef = Static<typeof DeployRef>

interface CommitRow {
  eventId: string
  ts: number
  repo: string
  branch: string | null
  commit: string
  author: string | null
  message: string | null
  files: string[]
}

const sameCommit = (a: string, b: string) => Math.min(a.length, b.length) >= MIN_SHA_PREFIX && (a.startsWith(b) || b.startsWith(a))

/** A frame's file and a path of a commit name the same file when one ends with the other (frames carry absolute paths). */
function sameFile(frameFile: string, path: string): boolean {
  const frame = frameFile.replace(/\\/g, '/').replace(/^\.?\//, '')
  const file = path.replace(/\\/g, '/').replace(/^\.?\//, '')
  return frame === file || frame.endsWith(`/${file}`) || file.endsWith(`/${frame}`)
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

/** The commits shipped by the release that first saw the group, suspects first. */
export async function suspectCommits(ctx: PortalContext, groupId: string, projectId: string): Promise<Static<typeof SuspectCommits>> {
  const db = errorDb(ctx.storage.db)
  const group = await db.selectFrom('error_groups').selectAll().where('id', '=', groupId).executeTakeFirstOrThrow()
  const [described] = await describeGroups(db, [group])
  const occurrences = await recentOccurrences(db, ctx.storage, groupId, OCCURRENCES_FOR_FRAMES)
  const inAppFiles = [...new Set(occurrences.data.flatMap((occurrence) => (occurrence.frames ?? []).filter((frame) => frame.inApp).map((frame) => frame.filename ?? frame.module).filter((file): file is string => !!file)))]
  const empty = { releaseDeploy: null, previousDeploy: null, compareUrl: null, inAppFiles, data: [] }
  const release = described.firstRelease
  if (!release) return { ...empty, release: null, basis: 'none', reason: 'No occurrence of this group named a release.' }

  const deploys = await readDeploys(ctx, projectId)
  const releaseDeploy = deploys.find((deploy) => deploy.release === release)
  if (!releaseDeploy) return { ...empty, release, basis: 'none', reason: `No deploy of ${release} was recorded: send a deploy event with its release (or version) and commit.` }
  const previousDeploy =
    deploys.filter((deploy) => deploy.ts < releaseDeploy.ts && deploy.service === releaseDeploy.service && deploy.environment === releaseDeploy.environment && deploy.release !== release).at(-1) ?? null
  const links = await readRepositoryLinks(tablesOf<RepositoryTables>(ctx.storage.db), projectId)

  const sinceMs = previousDeploy ? Date.parse(previousDeploy.ts) - COMMITS_BEFORE_DEPLOY_MS : Date.parse(releaseDeploy.ts) - COMMITS_BEFORE_DEPLOY_MS
  const commits = await readCommits(ctx, projectId, sinceMs, Date.parse(releaseDeploy.ts))
  const releaseIndex = releaseDeploy.commit ? commits.findIndex((commit) => sameCommit(commit.commit, releaseDeploy.commit!)) : -1
  const previousIndex = previousDeploy?.commit ? commits.findIndex((commit) => sameCommit(commit.commit, previousDeploy.commit!)) : -1
  let shipped: CommitRow[]
  let basis: 'commits' | 'time'
  let reason: string
  if (releaseIndex !== -1 && (previousIndex !== -1 || !previousDeploy)) {
    const branch = commits[releaseIndex].branch
    shipped = commits.slice(previousIndex + 1, releaseIndex + 1).filter((commit) => commit.branch === branch)
    basis = 'commits'
    reason = previousDeploy
      ? `The commits on ${branch ?? 'the release’s branch'} after ${previousDeploy.release} (${previousDeploy.commit}) up to ${release} (${releaseDeploy.commit}), the release that first saw this group.`
      : `The commits on ${branch ?? 'the release’s branch'} up to ${release} (${releaseDeploy.commit}): no earlier deploy of ${releaseDeploy.service} was recorded.`
  } else {
    const fromMs = previousDeploy ? Date.parse(previousDeploy.ts) : sinceMs
    shipped = commits.filter((commit) => commit.ts > fromMs)
    basis = 'time'
    reason = `The commits pushed between ${previousDeploy ? `the deploy of ${previousDeploy.release}` : 'thirty days before'} and the deploy of ${release}: the deploys’ commits are not among the repository events.`
  }
  const ranked = shipped
    .map((commit) => ({ commit, matchedFiles: commit.files.filter((file) => inAppFiles.some((frameFile) => sameFile(frameFile, file))) }))
    .sort((a, b) => b.matchedFiles.length - a.matchedFiles.length || b.commit.ts - a.commit.ts)
  const repo = shipped.at(-1)?.repo ?? null
  return {
    release,
    releaseDeploy,
    previousDeploy,
    basis,
    reason,
    inAppFiles,
    compareUrl: previousDeploy?.commit && releaseDeploy.commit ? compareUrl(links, repo, previousDeploy.commit, releaseDeploy.commit) : null,
    data: ranked.map(({ commit, matchedFiles }) => ({
      commit: commit.commit,
      repo: commit.repo,
      branch: commit.branch,
      author: commit.author,
      message: commit.message,
      ts: isoFromMs(commit.ts),
      eventId: commit.eventId,
      files: commit.files,
      matchedFiles,
      url: commitUrl(links, commit.repo, commit.commit),
    })),
  }
}

/** The project's deploys, oldest first. */
async function readDeploys(ctx: PortalContext, projectId: string): Promise<DeployRef[]> {
  const store = ctx.storage.eventsOf(deploysModule.table)
  const rows = await store.db
    .withTables<EventTablesByName>()
    .selectFrom(deploysModule.table)
    .select(['id', 'ts', 'data', ...store.dataColumns])
    .where('project_id', '=', projectId)
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_DEPLOYS_READ)
    .execute()
  return rows.reverse().map((row) => {
    const data = store.dataOf(row)
    return {
      eventId: String(row.id),
      ts: isoFromMs(row.ts as number),
      service: String(data.service),
      environment: text(data.environment),
      release: text(data.release) ?? text(data.version) ?? String(data.service),
      commit: text(data.commit),
    }
  })
}

/** The project's commits (repository events that name one) from `fromMs` to `toMs` inclusive, oldest first. */
async function readCommits(ctx: PortalContext, projectId: string, fromMs: number, toMs: number): Promise<CommitRow[]> {
  const store = ctx.storage.eventsOf(repositoryModule.table)
  const rows = await store.db
    .withTables<EventTablesByName>()
    .selectFrom(repositoryModule.table)
    .select(['id', 'ts', 'data', ...store.dataColumns])
    .where('project_id', '=', projectId)
    .where('ts', '>=', fromMs)
    .where('ts', '<=', toMs)
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_COMMITS_READ)
    .execute()
  return rows.reverse().flatMap((row) => {
    const data = store.dataOf(row)
    const commit = text(data.commit)
    if (!commit) return []
    return [{
      eventId: String(row.id),
      ts: Number(row.ts),
      repo: String(data.repo),
      branch: text(data.branch),
      commit,
      author: text(data.author),
      message: text(data.message),
      files: Array.isArray(data.files) ? data.files.filter((file): file is string => typeof file === 'string') : [],
    }]
  })
}

/** `GET /api/errors/groups/{fingerprint}/suspect-commits`. */
export function suspectCommitRoutes(app: ReadsApp, ctx: PortalContext, FingerprintParams: TObject<{ fingerprint: TString }>) {
  app.get(
    '/groups/:fingerprint/suspect-commits',
    {
      config: { access: 'read' },
      schema: {
        tags: ['errors'],
        operationId: 'listErrorGroupSuspectCommits',
        summary: 'The commits that may have introduced a group: those shipped by the first release it was seen in, suspects first',
        description:
          'The deploy of the group’s first release and the deploy before it (same service and environment) bound the commits, by their commit SHAs among the ' +
          'repository events (else by time). Commits whose `files` include a file of the group’s in-app frames rank first. Links come from the project’s ' +
          'repository links (`GET /api/modules/repository/links`).',
        params: FingerprintParams,
        response: { 200: SuspectCommits, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const group = await findFoldedGroup(ctx, accessPrincipal(request).orgId, request.params.fingerprint)
      return suspectCommits(ctx, group.id, group.project_id)
    },
  )
}
