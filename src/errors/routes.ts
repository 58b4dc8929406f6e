import { Type } from 'typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Kysely } from 'kysely'
import type { PortalContext } from '../context.ts'
import type { Database } from '../storage/tables.ts'
import { accessPrincipal, type Principal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery } from '../http/list.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { named } from '../http/openapi-components.ts'
import { refuseWhenBacklogged } from '../http/load-shedding.ts'
import { findProject } from '../projects/store.ts'
import { CaptureBody, CaptureResponse, occurrenceFromCapture } from './capture.ts'
import { RATE_HEADERS, admitToProject } from '../ingest/rate-limit.ts'
import { IDEMPOTENT_REPLAYED } from '../ingest/idempotency.ts'
import { createGroupCommitter } from '../storage/group-commit.ts'
import { foldProjectCounts, OCCURRENCES_KEPT_PER_GROUP, recordOccurrences, type Occurrence, type RecordedOccurrence } from './group-store.ts'
import {
  describeGroups,
  ErrorGroup,
  ErrorGroupDetail,
  ErrorGroupTags,
  groupTags,
  ErrorOccurrence,
  findFoldedGroup,
  groupDetail,
  GroupStatusSchema,
  listGroups,
  occurrenceHistogram,
  occurrencesOfTrace,
  recentOccurrences,
  TraceOccurrence,
} from './group-reads.ts'
import { HistogramQuery, histogramBuckets } from '../http/histogram.ts'
import { GroupTriageBody, mergeGroups, setGroupStatus, statusConditions, unmergeFingerprints } from './triage.ts'
import { unignoreDueGroups } from './unignore.ts'
import { errorDb } from './tables.ts'
import { suspectCommitRoutes } from './suspect-commits.ts'
import { assigneeRoutes } from './assignees.ts'
import { inClaimOrder } from '../ingest/claim-order.ts'
import { claimIdempotencyKey, findStoredResponse, idempotencyKeyOf, replay, setStoredResponse } from '../ingest/idempotency.ts'

const tags = ['errors']
const MAX_CAPTURES_PER_TRANSACTION = 500
const Fingerprint = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'a group fingerprint: 64 lower-case hex digits', examples: ['3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718'] })
const FingerprintParams = Type.Object({ fingerprint: Fingerprint })
const FingerprintList = (description: string) =>
  Type.Object({ fingerprints: Type.Array(Fingerprint, { minItems: 1, maxItems: 100, description }) }, { additionalProperties: false, examples: [{ fingerprints: ['8c1f0e9d2b3a4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5'] }] })

const GroupsQuery = Type.Object(
  {
    project_id: Type.String({ description: 'the project (prj_…); 404 unless it is a live project of your organisation' }),
    ...PageQuery,
    status: Type.Optional(GroupStatusSchema),
    assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'groups assigned to this person (a token’s name or an OIDC subject, as `PUT …/assignee` takes)' })),
    assigned: Type.Optional(
      Type.Union([Type.Literal('me'), Type.Literal('nobody')], { description: '`me`: groups assigned to whoever asks (their token’s name or OIDC subject); `nobody`: unassigned groups. Not with `assignee`' }),
    ),
    environment: Type.Optional(Type.String({ description: 'groups with an occurrence in this environment' })),
    release: Type.Optional(Type.String({ description: 'groups with an occurrence in this release' })),
    service: Type.Optional(Type.String({ description: 'groups with an occurrence from this service' })),
    q: Type.Optional(Type.String({ minLength: 1, description: 'case-insensitive text within the name or message' })),
    first_release: Type.Optional(Type.String({ description: 'groups first seen in this release (their earliest release): what a deploy of it introduced' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'groups last seen at or after (ISO 8601)' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'groups first seen before (ISO 8601)' })),
    sort: Type.Optional(
      Type.Union([Type.Literal('last_seen'), Type.Literal('first_seen'), Type.Literal('count')], {
        description: 'newest last occurrence (default), newest group, or most occurrences first; a cursor belongs to its sort',
      }),
    ),
  },
  { additionalProperties: false },
)

/** The errors module's own routes: capture, the grouped reads, triage, merge and unmerge. */
export const errorRoutes: FastifyPluginAsync<{ ctx: PortalContext }> = async (plugin, { ctx }) => {
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>()
  const db = errorDb(ctx.storage.db)
  // Captures arriving together share one transaction; each is answered once it is committed.
  const committer = createGroupCommitter<Capture, RecordedOccurrence | undefined>(ctx.storage, (trx, captures) => recordCaptures(trx, ctx, captures), MAX_CAPTURES_PER_TRANSACTION, undefined, 'errors')
  app.addHook('onClose', () => committer.close())

  app.post(
    '/capture',
    {
      config: { access: 'apiKey' },
      // Spec 4.1 rule 2: a repeat is answered before its body is validated or counted against a rate limit.
      preValidation: async (request, reply) => {
        const key = idempotencyKeyOf(request.headers['x-service-idempotency-key'])
        if (key === undefined) return
        const principal = request.principal as Extract<Principal, { kind: 'apiKey' }>
        const stored = await findStoredResponse(ctx.storage.db, principal.projectId, key)
        if (stored) return replay(reply, stored)
      },
      schema: {
        operationId: 'captureError',
        tags,
        summary: 'Capture an exception occurrence',
        description:
          'Takes a project API key (pk_…) as bearer. Unlike /api/ingest the body is not signed: no X-Service-Signature is needed or checked. ' +
          'Grouping (algorithm v2, as Sentry’s): the exception name counts; the in-app frames’ module or lower-cased file base name and ' +
          'function count (never line or column numbers or path prefixes; node_modules, site-packages, vendored runtimes and polyfills and runtime frames ' +
          'are not in-app); without in-app frames all frames count; without frames the message counts, with e-mails, URLs, IPs, UUIDs, hashes, hex, ' +
          'dates, times, durations, numbers, ids and quoted values replaced by placeholders. `fingerprint` replaces it, with {{ default }}, {{ type }}, ' +
          '{{ message }}, {{ tags.NAME }} and the other Sentry variables. The fingerprint is the hex SHA-256 of the version, the project and those components (docs/errors.md). ' +
          `A group keeps its latest ${OCCURRENCES_KEPT_PER_GROUP} occurrences; its counts stay exact. 201 means the occurrence is committed. ` +
          'Each capture counts as one event and one batch against the project’s ingest limits (429 with `Retry-After` past them).',
        security: [{ apiKey: [] }],
        headers: Type.Object({
          'x-service-idempotency-key': Type.Optional(
            Type.String({ format: 'uuid', description: 'a UUID; a repeat within 24 h, whatever its body, returns the first response with `Idempotent-Replayed: true` and records nothing' }),
          ),
        }),
        body: CaptureBody,
        response: {
          201: { description: 'Committed and grouped, or the first answer to this idempotency key replayed.', headers: { ...RATE_HEADERS, ...IDEMPOTENT_REPLAYED }, content: { 'application/json': { schema: CaptureResponse } } },
          ...problemResponses(400, 401, 403, 'invalid_idempotency_key', 'idempotency_key_in_flight', 413, 415, 429, 503),
        },
      },
    },
    async (request, reply) => {
      refuseWhenBacklogged(committer, ctx.config.loadShedding)
      const principal = request.principal as Extract<Principal, { kind: 'apiKey' }>
      const key = idempotencyKeyOf(request.headers['x-service-idempotency-key'])
      // A capture is one event and one batch of its project's ingest limits: a crash loop cannot flood the database.
      await admitToProject(ctx, principal, reply, 1)
      const occurrence = occurrenceFromCapture(principal.projectId, request.body as CaptureBody, Date.now())
      const recorded = await committer.write({ occurrence, key })
      if (recorded) return reply.code(201).send(recorded)
      const concurrent = await findStoredResponse(ctx.storage.db, principal.projectId, key!)
      if (concurrent) return replay(reply, concurrent)
      throw new ProblemError(409, 'idempotency_key_in_flight', 'X-Service-Idempotency-Key: a request with this key is still being processed; retry')
    },
  )

  app.get(
    '/groups',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listErrorGroups',
        tags,
        summary: 'A project’s error groups, filtered and sorted',
        description: 'Groups of captured exceptions and ingested `error` events; one group’s detail: `GET /api/errors/groups/{fingerprint}`.',
        querystring: GroupsQuery, response: { 200: List(ErrorGroup), ...problemResponses(400, 401, 403, 404, 503) } },
    },
    async (request) => {
      const { project_id: projectId, limit = DEFAULT_LIMIT, cursor, assigned, ...filters } = request.query
      const principal = accessPrincipal(request)
      if (assigned !== undefined && filters.assignee !== undefined) throw new ProblemError(400, 'invalid_request', 'query.assigned: give assignee or assigned, not both')
      const assignee = assigned === 'nobody' ? null : assigned === 'me' ? principal.name : filters.assignee
      await findProject(ctx.storage.db, principal.orgId, projectId)
      await foldProjectCounts(ctx, projectId)
      await unignoreDueGroups(ctx, projectId)
      return listGroups(db, ctx.storage, projectId, { ...filters, assignee }, limit, cursor)
    },
  )

  app.get(
    '/occurrences',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listTraceErrorOccurrences',
        tags,
        summary: 'The stored error occurrences of one trace, newest first, with their groups',
        description: 'What went wrong in a trace: occurrences whose `traceId` is `trace_id`, across groups. Each group keeps its latest occurrences only.',
        querystring: Type.Object(
          {
            project_id: Type.String({ description: 'the project (prj_…); 404 unless it is a live project of your organisation' }),
            trace_id: Type.String({ minLength: 1, maxLength: 128, description: 'the trace id, as spans and occurrences carry it' }),
            ...PageQuery,
          },
          { additionalProperties: false },
        ),
        response: { 200: List(TraceOccurrence), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { project_id: projectId, trace_id: traceId, limit = DEFAULT_LIMIT, cursor } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      return occurrencesOfTrace(db, ctx.storage, projectId, traceId, limit, cursor)
    },
  )

  app.get(
    '/histogram',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'countErrorOccurrencesOverTime',
        tags,
        summary: 'How many error occurrences a project stored per time bucket',
        description:
          `Stored occurrences per bucket over [from, to), every bucket listed (zeros included). Buckets start at multiples of \`bucket_seconds\` since the epoch (UTC). ` +
          `Each group keeps its latest ${OCCURRENCES_KEPT_PER_GROUP} occurrences, so a bucket under-counts a group that had more since; groups’ \`count\` and \`countsPerDay\` stay exact.`,
        querystring: Type.Object(
          { project_id: Type.String({ description: 'the project (prj_…); 404 unless it is a live project of your organisation' }), ...HistogramQuery('occurrences') },
          { additionalProperties: false },
        ),
        response: {
          200: named('ErrorOccurrenceHistogram', Type.Object({ data: Type.Array(Type.Object({ start: Type.String({ format: 'date-time' }), count: Type.Integer() })), total: Type.Integer() })),
          ...problemResponses(400, 401, 403, 404, 503),
        },
      },
    },
    async (request) => {
      const { project_id: projectId } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const { fromMs, toMs, bucketMs } = histogramBuckets(request.query)
      const data = await occurrenceHistogram(db, projectId, fromMs, toMs, bucketMs)
      return { data, total: data.reduce((sum, bucket) => sum + bucket.count, 0) }
    },
  )

  app.get(
    '/groups/:fingerprint',
    {
      config: { access: 'read' },
      schema: {
        tags,
        operationId: 'getErrorGroup',
        summary: 'A group with why its occurrences share it, its last 14 days and its most recent occurrences',
        description: 'Any fingerprint the group holds finds it, including those merged into it.',
        params: FingerprintParams,
        response: { 200: ErrorGroupDetail, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => groupDetail(db, ctx.storage, await findFoldedGroup(ctx, accessPrincipal(request).orgId, request.params.fingerprint)),
  )

  app.get(
    '/groups/:fingerprint/occurrences',
    {
      config: { access: 'read' },
      schema: {
        tags,
        operationId: 'listErrorGroupOccurrences',
        summary: `A group’s stored occurrences (its latest ${OCCURRENCES_KEPT_PER_GROUP}), newest first`,
        description: 'Paged by `cursor`; older occurrences beyond those kept are counted in the group but not stored.',
        params: FingerprintParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: List(ErrorOccurrence), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const group = await findFoldedGroup(ctx, accessPrincipal(request).orgId, request.params.fingerprint)
      return recentOccurrences(db, ctx.storage, group.id, request.query.limit ?? DEFAULT_LIMIT, request.query.cursor)
    },
  )

  app.get(
    '/groups/:fingerprint/tags',
    {
      config: { access: 'read' },
      schema: {
        tags,
        operationId: 'listErrorGroupTags',
        summary: 'Tags as facets: the most frequent values of each tag key over a group’s occurrences, with counts',
        description:
          'Every occurrence counts, not only the stored ones: the counts are kept per fingerprint as occurrences are written (environment, release, service, ' +
          'the user, and each Sentry tag of up to 32 characters with a value of up to 200). The `user` key’s distinct values are the group’s users affected.',
        params: FingerprintParams,
        querystring: Type.Object(
          { values: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'values shown per key (10)' })) },
          { additionalProperties: false },
        ),
        response: { 200: ErrorGroupTags, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const group = await findFoldedGroup(ctx, accessPrincipal(request).orgId, request.params.fingerprint)
      return groupTags(db, group.id, request.query.values ?? 10)
    },
  )
  suspectCommitRoutes(app, ctx, FingerprintParams)
  assigneeRoutes(app, ctx, FingerprintParams)

  app.patch(
    '/groups/:fingerprint',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        operationId: 'updateErrorGroup',
        summary: 'Triage a group: unresolved, resolved (now, in the next release, in a release) or ignored (for good, until more occurrences or users, or a time)',
        description:
          'Clears `regressed` and `unignored`, and replaces the conditions of the status before. An occurrence of a resolved group reopens it as unresolved ' +
          'with `regressed: true` (error.group.regressed), unless it was resolved in a release and the occurrence is of an older release or names none. ' +
          '**Which releases are older** is judged, as Sentry does without semver, by when each was first named: `inNextRelease` keeps every release the ' +
          'project’s error occurrences had named when it was resolved, so the next release is any other; `inRelease: X` keeps the releases first named ' +
          'before X (all named so far when X was not yet), and X itself reopens it. An ignored group stays ignored, until its `ignoreCount` more occurrences, ' +
          '`ignoreUserCount` more users affected or its `ignoreUntil` time (or `ignoreDuration` minutes from now), whichever comes first: it then returns to unresolved with `unignored: true` ' +
          '(error.group.unignored), within a second and before any read of it shows it, whether or not an occurrence arrives.',
        params: FingerprintParams,
        body: GroupTriageBody,
        response: { 200: ErrorGroup, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { status, statusDetails = {} } = request.body
      const conditions = statusConditions(status, statusDetails, Date.now())
      const group = await setGroupStatus(ctx, accessPrincipal(request).orgId, request.params.fingerprint, status, conditions)
      return (await describeGroups(db, [group]))[0]
    },
  )

  app.post(
    '/groups/:fingerprint/merge',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        operationId: 'mergeErrorGroups',
        summary: 'Merge other groups of the project into this one',
        description:
          'The groups that `fingerprints` belong to join this group: it answers to all their fingerprints, counts and days are summed, ' +
          'it keeps its own status and primary fingerprint, and later occurrences of any of them join it. Undo with unmerge. ' +
          '404 when a fingerprint is unknown, 422 when it belongs to another project.',
        params: FingerprintParams,
        body: FingerprintList('fingerprints whose groups merge into this one'),
        response: { 200: ErrorGroup, ...problemResponses(400, 401, 403, 404, 'other_project', 503) },
      },
    },
    async (request) => {
      const group = await mergeGroups(ctx, accessPrincipal(request).orgId, request.params.fingerprint, request.body.fingerprints)
      return (await describeGroups(db, [group]))[0]
    },
  )

  app.post(
    '/groups/:fingerprint/unmerge',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        operationId: 'unmergeErrorGroup',
        summary: 'Take fingerprints out of this group, each into a new group of its own',
        description:
          'Each fingerprint leaves with its own counts, days, environments, releases and stored occurrences; its new group is unresolved. ' +
          'When the group’s primary fingerprint leaves, its oldest remaining fingerprint becomes primary. ' +
          '422 when a fingerprint is not in the group, or when none would remain.',
        params: FingerprintParams,
        body: FingerprintList('fingerprints of this group to put back on their own'),
        response: {
          200: Type.Object({ group: ErrorGroup, unmerged: Type.Array(ErrorGroup, { description: 'the new groups, in the order asked' }) }, { description: 'The group as it is now, and the new groups.' }),
          ...problemResponses(400, 401, 403, 404, 'not_in_group', 'last_fingerprint', 503),
        },
      },
    },
    async (request) => {
      const { group, unmerged } = await unmergeFingerprints(ctx, accessPrincipal(request).orgId, request.params.fingerprint, request.body.fingerprints)
      const [described, ...others] = await describeGroups(db, [group, ...unmerged])
      return { group: described, unmerged: others }
    },
  )
}

/** A capture, with the idempotency key (if any) that must commit with its occurrence. */
interface Capture {
  occurrence: Occurrence
  key: string | undefined
}

/**
 * Records the captures whose key is not held already (by an earlier request, or by another capture of
 * this very group); the others record nothing and get undefined, so that their request replays the first answer.
 */
async function recordCaptures(trx: Kysely<Database>, ctx: PortalContext, captures: Capture[]): Promise<(RecordedOccurrence | undefined)[]> {
  const pending = { statusCode: 201, body: '' } // replaced below, in this transaction, once the group is known
  const held = new Set<Capture>()
  for (const capture of inClaimOrder(captures, (capture) => ({ projectId: capture.occurrence.projectId, key: capture.key }))) {
    if (!(await claimIdempotencyKey(trx, capture.occurrence.projectId, capture.key!, pending))) held.add(capture)
  }
  const claimed = captures.filter((capture) => !held.has(capture))
  const recorded = await recordOccurrences(trx, ctx, claimed.map((capture) => capture.occurrence))
  const results = new Map(claimed.map((capture, index) => [capture, recorded[index]]))
  for (const [capture, result] of results) {
    if (capture.key !== undefined) await setStoredResponse(trx, capture.occurrence.projectId, capture.key, { statusCode: 201, body: JSON.stringify(result) })
  }
  return captures.map((capture) => results.get(capture))
}
