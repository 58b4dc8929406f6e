import { Type, type Static } from 'typebox'
import { named } from '../http/openapi-components.ts'
import { sql } from 'kysely'
import type { Storage } from '../storage/storage.ts'
import { tablesOf } from '../storage/tables.ts'
import { ProblemError } from '../http/problem.ts'
import { pageAfter, queryTime, toPage, type Page } from '../http/list.ts'
import { isoTime } from '../ids.ts'
import { findProject } from '../projects/store.ts'
import type { PortalContext } from '../context.ts'
import { foldProjectCounts, OCCURRENCES_KEPT_PER_GROUP, TAG_KEYS } from './group-store.ts'
import { errorDb, type ErrorDb, type ErrorTables, type GroupRow, type GroupStatus } from './tables.ts'
import { unignoreDueGroups } from './unignore.ts'
import { parseStackTrace, type Frame } from './stack-trace.ts'
import { Breadcrumb, BREADCRUMBS_KEPT, tagKeyShown, type Breadcrumb as BreadcrumbValue } from './occurrence-context.ts'

const RECENT_OCCURRENCES = 20
const DAYS_SHOWN = 14
const DAY_MS = 86_400_000

const Time = Type.String({ format: 'date-time' })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

export const GroupStatusSchema = named(
  'ErrorGroupStatus',
  Type.Union([Type.Literal('unresolved'), Type.Literal('resolved'), Type.Literal('ignored')], { description: 'triage state; an occurrence reopens a resolved group' }),
)

const FingerprintText = (description: string) => Type.String({ description, examples: ['3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718'] })

export const ErrorGroup = named('ErrorGroup', Type.Object({
  fingerprint: FingerprintText('the fingerprint the group is known by; any fingerprint in `fingerprints` finds it too'),
  projectId: Type.String({ description: 'prj_…' }),
  name: Type.String({ description: 'exception name of the latest occurrence' }),
  message: Type.String({ description: 'message of the latest occurrence' }),
  status: GroupStatusSchema,
  regressed: Type.Boolean({ description: 'reopened by an occurrence after it was resolved; cleared by the next triage' }),
  unignored: Type.Boolean({ description: 'ignored until a count, a number of users or a time, and returned to unresolved when it was reached (as Sentry’s escalating); cleared by the next triage' }),
  statusDetails: named('ErrorGroupStatusDetails', Type.Object({
    inNextRelease: Type.Boolean({ description: 'resolved in the next release: occurrences of releases the project’s errors had named when it was resolved, or of none, leave it resolved; any other release reopens it' }),
    inRelease: Nullable(Type.String({ description: 'resolved in this release: occurrences of releases first named before it, or of none, leave it resolved; this release or a later one reopens it' })),
    latestRelease: Nullable(Type.String({ description: 'resolved in the next release: the newest release the project’s errors had named then (the next is any other)' })),
    ignoreUntil: Nullable(Type.String({ format: 'date-time', description: 'ignored until this time, then unresolved again' })),
    ignoreUntilCount: Nullable(Type.Integer({ description: 'ignored until `count` reaches this, then unresolved again' })),
    ignoreUntilUserCount: Nullable(Type.Integer({ description: 'ignored until `usersAffected` reaches this, then unresolved again' })),
  }, { description: 'The conditions set with the status, as Sentry’s statusDetails; all null or false for a plain status.' })),
  assignee: Nullable(Type.String({ description: 'who it is assigned to (`PUT …/assignee`), or null' })),
  groupingAlgorithm: Type.String({ description: 'the grouping algorithm version that opened it (v1 for groups older than v2); occurrences of later versions still find it, see docs/errors.md' }),
  firstSeen: Time,
  lastSeen: Time,
  count: Type.Integer({ description: `every occurrence ever, exact (only the latest ${OCCURRENCES_KEPT_PER_GROUP} are kept)` }),
  environments: Type.Array(Type.String(), { description: 'every environment an occurrence named' }),
  releases: Type.Array(Type.String(), { description: 'in the order they were first seen' }),
  services: Type.Array(Type.String(), { description: 'every service an occurrence named' }),
  firstRelease: Nullable(Type.String({ description: 'the release of the first occurrence that named one' })),
  lastRelease: Nullable(Type.String({ description: 'the release of the latest occurrence that named one' })),
  fingerprints: Type.Array(Type.String(), { description: 'every fingerprint merged into the group, the oldest first' }),
  countsPerDay: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Type.Integer() }), {
    description: `occurrences per UTC day over the last ${DAYS_SHOWN} days, oldest first, today included`,
  }),
  usersAffected: Type.Integer({ description: 'distinct users its occurrences named (`user.id`, else `user.email`, else `user.ip_address`), exact' }),
}, { description: 'Occurrences that share a fingerprint: one problem to triage.' }))

const OccurrenceFrame = named('StackFrame', Type.Object({
  function: Nullable(Type.String()),
  module: Nullable(Type.String()),
  filename: Nullable(Type.String()),
  lineno: Nullable(Type.Integer()),
  colno: Nullable(Type.Integer()),
  inApp: Type.Boolean({ description: 'your code, not a library or the runtime' }),
}, { description: 'One stack frame; only in-app frames count for grouping.' }))

export const ErrorOccurrence = named('ErrorOccurrence', Type.Object({
  id: Type.String({ description: 'occ_…, or the evt_… of an ingested error event' }),
  fingerprint: Type.String({ description: 'the fingerprint computed for it' }),
  timestamp: Time,
  receivedAt: Time,
  name: Type.String(),
  message: Type.String(),
  stack: Nullable(Type.String()),
  frames: Nullable(Type.Array(OccurrenceFrame, { description: 'parsed or given frames, innermost first' })),
  release: Nullable(Type.String()),
  environment: Nullable(Type.String()),
  service: Nullable(Type.String()),
  request: Nullable(Type.Record(Type.String(), Type.Unknown())),
  metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'the capture’s fields beyond the known ones' }),
  traceId: Nullable(Type.String({ description: 'the trace it happened in: `metadata.traceId` (set by OpenTelemetry, Sentry SDKs, or a capture’s `traceId`)' })),
  spanId: Nullable(Type.String({ description: 'the span it happened in: `metadata.spanId`' })),
  breadcrumbs: Type.Array(Breadcrumb, { description: `what happened before it, oldest first (the newest ${BREADCRUMBS_KEPT} sent)` }),
  reportedBy: Type.Array(Type.String(), { description: 'the receivers that reported it (`sentry`, `opentelemetry`): both when one exception reported twice for its span was stored once' }),
}, { description: 'One captured exception.' }))

const TagCount = Type.Object({ value: Type.String(), count: Type.Integer({ description: 'occurrences that named it, exact' }), firstSeen: Time, lastSeen: Time })

const GroupingComponentSchema = Type.Object({
  id: Type.String({ description: 'exception (a type), stacktrace, value (an exception’s message), message (an event without exception) or custom (the client’s fingerprint)' }),
  contributes: Type.Boolean({ description: 'whether its values went into the hash' }),
  values: Type.Array(Type.String()),
  hint: Type.String({ description: 'why it counts or not' }),
})

export const ErrorGroupDetail = named('ErrorGroupDetail', Type.Object({
  ...ErrorGroup.properties,
  grouping: Type.Array(
    Type.Object({
      fingerprint: Type.String(),
      algorithm: Type.String({ description: 'the grouping algorithm version that computed it' }),
      components: Type.Array(GroupingComponentSchema),
      count: Type.Integer(),
      firstSeen: Time,
      lastSeen: Time,
    }),
    { description: 'why occurrences share this group: the components hashed into each of its fingerprints' },
  ),
  occurrences: Type.Array(ErrorOccurrence, { description: `the most recent, newest first (at most ${RECENT_OCCURRENCES})` }),
  breakdown: Type.Object(
    { release: Type.Array(TagCount), environment: Type.Array(TagCount), service: Type.Array(TagCount) },
    { description: 'occurrences per release, environment and service, most frequent first; occurrences that named none are not counted' },
  ),
}, { description: 'A group with why its occurrences share it and its most recent occurrences.' }))

export type ErrorGroup = Static<typeof ErrorGroup>

export const GROUP_SORTS = { last_seen: 'last_seen', first_seen: 'first_seen', count: 'count' } as const

export interface GroupFilters {
  status?: GroupStatus
  /** a person's name, or null for groups assigned to nobody; undefined for any */
  assignee?: string | null
  environment?: string
  release?: string
  service?: string
  q?: string
  first_release?: string
  from?: string
  to?: string
  sort?: keyof typeof GROUP_SORTS
}


/** The group a fingerprint belongs to, if the caller's organisation may see it; else a 404. */
export async function findGroup(db: ErrorDb, orgId: string, fingerprint: string): Promise<GroupRow> {
  const row = await db
    .selectFrom('error_fingerprints')
    .innerJoin('error_groups', 'error_groups.id', 'error_fingerprints.group_id')
    .selectAll('error_groups')
    .where('error_fingerprints.fingerprint', '=', fingerprint)
    .executeTakeFirst()
  const notFound = new ProblemError(404, 'not_found', `error group ${fingerprint} was not found`)
  if (!row) throw notFound
  await withNotFound(findProject(tablesOf(db), orgId, row.project_id), notFound)
  return row
}

/** Like findGroup, with the counts captures appended since the last fold added to it (and its days and tags), and unignored if its condition is reached. */
export async function findFoldedGroup(ctx: PortalContext, orgId: string, fingerprint: string): Promise<GroupRow> {
  const db = errorDb(ctx.storage.db)
  const unfolded = await findGroup(db, orgId, fingerprint)
  await foldProjectCounts(ctx, unfolded.project_id, [unfolded.id])
  await unignoreDueGroups(ctx, unfolded.project_id)
  return findGroup(db, orgId, fingerprint)
}

/** What `find` finds, its 404 replaced by `notFound` (so as to name the right thing); other failures pass through. */
export async function withNotFound<T>(find: Promise<T>, notFound: ProblemError): Promise<T> {
  try {
    return await find
  } catch (error) {
    throw error instanceof ProblemError && error.status === 404 ? notFound : error
  }
}

/** A project's groups, filtered and sorted (newest, oldest or most frequent first), one page. */
export async function listGroups(db: ErrorDb, storage: Storage, projectId: string, filters: GroupFilters, limit: number, cursor?: string): Promise<Page<ErrorGroup>> {
  let query = db.selectFrom('error_groups').selectAll().where('project_id', '=', projectId)
  if (filters.status !== undefined) query = query.where('status', '=', filters.status)
  if (filters.assignee !== undefined) {
    const assignee = filters.assignee
    query = query.where((eb) => {
      const assigned = eb.selectFrom('error_group_assignees').select('error_group_assignees.group_id').whereRef('error_group_assignees.group_id', '=', 'error_groups.id')
      return assignee === null ? eb.not(eb.exists(assigned)) : eb.exists(assigned.where('error_group_assignees.assignee', '=', assignee))
    })
  }
  if (filters.q !== undefined) {
    const needle = filters.q
    query = query.where((eb) => eb.or([storage.containsText('name', needle), storage.containsText('message', needle)]))
  }
  for (const key of TAG_KEYS) {
    const value = filters[key]
    if (value === undefined) continue
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('error_fingerprint_tags')
          .select('error_fingerprint_tags.group_id')
          .whereRef('error_fingerprint_tags.group_id', '=', 'error_groups.id')
          .where('error_fingerprint_tags.key', '=', key)
          .where('error_fingerprint_tags.value', '=', value),
      ),
    )
  }
  if (filters.first_release !== undefined) {
    const release = filters.first_release
    // The group's first release is the release tag seen earliest, over all its fingerprints.
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('error_fingerprint_tags as first')
          .select('first.group_id')
          .whereRef('first.group_id', '=', 'error_groups.id')
          .where('first.key', '=', 'release')
          .where('first.value', '=', release)
          .where(
            'first.first_seen',
            '=',
            eb.selectFrom('error_fingerprint_tags as earliest').select((inner) => inner.fn.min('earliest.first_seen').as('first_seen')).whereRef('earliest.group_id', '=', 'error_groups.id').where('earliest.key', '=', 'release'),
          ),
      ),
    )
  }
  const fromMs = queryTime(filters.from)
  const toMs = queryTime(filters.to)
  if (fromMs !== undefined) query = query.where('last_seen', '>=', fromMs)
  if (toMs !== undefined) query = query.where('first_seen', '<', toMs)
  const sortColumn = GROUP_SORTS[filters.sort ?? 'last_seen']
  const rows = await pageAfter(query, cursor, limit, sortColumn, 'id').execute()
  const page = toPage(rows, limit, (row) => [row[sortColumn], row.id], (row) => row)
  return { data: await describeGroups(db, page.data), nextCursor: page.nextCursor }
}

/** Groups as the API shows them, with the environments, releases, fingerprints and last days of each. */
export async function describeGroups(db: ErrorDb, rows: GroupRow[], now = Date.now()): Promise<ErrorGroup[]> {
  if (rows.length === 0) return []
  const ids = rows.map((row) => row.id)
  const today = Math.floor(now / DAY_MS)
  const days = await db
    .selectFrom('error_fingerprint_days')
    .select((eb) => ['group_id', 'day', eb.fn.sum('count').as('count')])
    .where('group_id', 'in', ids)
    .where('day', '>', today - DAYS_SHOWN)
    .groupBy(['group_id', 'day'])
    .execute()
  const countOn = new Map(days.map((day) => [`${day.group_id} ${day.day}`, Number(day.count)]))
  const tags = await db
    .selectFrom('error_fingerprint_tags')
    .select((eb) => ['group_id', 'key', 'value', eb.fn.min('first_seen').as('first_seen'), eb.fn.max('last_seen').as('last_seen')])
    .where('group_id', 'in', ids)
    .where('key', 'in', TAG_KEYS)
    .groupBy(['group_id', 'key', 'value'])
    .orderBy('first_seen')
    .orderBy('value')
    .execute()
  const fingerprints = await groupFingerprints(db, ids)
  const users = await usersAffected(db, ids)
  const assignees = new Map((await db.selectFrom('error_group_assignees').select(['group_id', 'assignee']).where('group_id', 'in', ids).execute()).map((row) => [row.group_id, row.assignee]))
  return rows.map((row) => {
    const own = tags.filter((tag) => tag.group_id === row.id)
    const values = (key: string) => own.filter((tag) => tag.key === key)
    const releases = values('release')
    const lastRelease = releases.reduce<(typeof releases)[number] | undefined>((latest, tag) => (latest && latest.last_seen >= tag.last_seen ? latest : tag), undefined)
    return {
      fingerprint: row.fingerprint,
      projectId: row.project_id,
      name: row.name,
      message: row.message,
      status: row.status,
      regressed: row.regressed === 1,
      unignored: row.unignored === 1,
      statusDetails: {
        inNextRelease: row.resolved_in === 'next_release',
        inRelease: row.resolved_in === 'release' ? row.resolved_release : null,
        latestRelease: row.resolved_in === 'next_release' ? row.resolved_release : null,
        ignoreUntil: isoTime(row.ignored_until),
        ignoreUntilCount: row.ignored_until_count,
        ignoreUntilUserCount: row.ignored_until_users,
      },
      assignee: assignees.get(row.id) ?? null,
      groupingAlgorithm: row.algorithm,
      firstSeen: isoTime(row.first_seen)!,
      lastSeen: isoTime(row.last_seen)!,
      count: row.count,
      environments: values('environment').map((tag) => tag.value),
      releases: releases.map((tag) => tag.value),
      services: values('service').map((tag) => tag.value),
      firstRelease: releases[0]?.value ?? null,
      lastRelease: lastRelease?.value ?? null,
      fingerprints: fingerprints.filter((item) => item.groupId === row.id).map((item) => item.fingerprint),
      countsPerDay: Array.from({ length: DAYS_SHOWN }, (_, index) => {
        const day = today - DAYS_SHOWN + 1 + index
        return { date: new Date(day * DAY_MS).toISOString().slice(0, 10), count: countOn.get(`${row.id} ${day}`) ?? 0 }
      }),
      usersAffected: users.get(row.id) ?? 0,
    }
  })
}

/**
 * Distinct users per group: the `user` values of its tag rows, kept as occurrences are folded in, so a
 * read counts index entries (group_id, key, value) rather than occurrences.
 */
export async function usersAffected(db: ErrorDb, groupIds: string[]): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('error_fingerprint_tags')
    .select((eb) => ['group_id', eb.fn.count('value').distinct().as('users')])
    .where('group_id', 'in', groupIds)
    .where('key', '=', 'user')
    .groupBy('group_id')
    .execute()
  return new Map(rows.map((row) => [row.group_id, Number(row.users)]))
}

/** The fingerprints of groups with their totals (summed over their days), the oldest first. */
export async function groupFingerprints(db: ErrorDb, groupIds: string[]) {
  const rows = await db
    .selectFrom('error_fingerprint_days')
    .select((eb) => ['group_id', 'fingerprint', eb.fn.sum('count').as('count'), eb.fn.min('first_seen').as('first_seen'), eb.fn.max('last_seen').as('last_seen')])
    .where('group_id', 'in', groupIds)
    .groupBy(['group_id', 'fingerprint'])
    .orderBy('first_seen')
    .orderBy('fingerprint')
    .execute()
  return rows.map((row) => ({
    groupId: row.group_id,
    fingerprint: row.fingerprint,
    count: Number(row.count),
    firstSeen: row.first_seen,
    lastSeen: row.last_seen,
  }))
}

/** The group with why it groups, its last 14 days and its most recent occurrences. */
export async function groupDetail(db: ErrorDb, storage: Storage, row: GroupRow): Promise<Static<typeof ErrorGroupDetail>> {
  const [group] = await describeGroups(db, [row])
  const totals = await groupFingerprints(db, [row.id])
  const hashed = await db.selectFrom('error_fingerprints').select(['fingerprint', 'algorithm', 'components']).where('group_id', '=', row.id).execute()
  const occurrences = await recentOccurrences(db, storage, row.id, RECENT_OCCURRENCES)
  const tagCounts = await db
    .selectFrom('error_fingerprint_tags')
    .select((eb) => ['key', 'value', eb.fn.sum('count').as('count'), eb.fn.min('first_seen').as('first_seen'), eb.fn.max('last_seen').as('last_seen')])
    .where('group_id', '=', row.id)
    .where('key', 'in', TAG_KEYS)
    .groupBy(['key', 'value'])
    .execute()
  const breakdownOf = (key: string) =>
    tagCounts
      .filter((tag) => tag.key === key)
      .map((tag) => ({ value: tag.value, count: Number(tag.count), firstSeen: isoTime(tag.first_seen)!, lastSeen: isoTime(tag.last_seen)! }))
      .sort((a, b) => b.count - a.count || a.value.localeCompare(b.value))
  return {
    breakdown: { release: breakdownOf('release'), environment: breakdownOf('environment'), service: breakdownOf('service') },
    ...group,
    grouping: totals.map((item) => {
      const { algorithm, components } = hashed.find((entry) => entry.fingerprint === item.fingerprint)!
      return {
        fingerprint: item.fingerprint,
        algorithm,
        components: storage.parseJson(components),
        count: item.count,
        firstSeen: isoTime(item.firstSeen)!,
        lastSeen: isoTime(item.lastSeen)!,
      }
    }),
    occurrences: occurrences.data,
  }
}

/** A group's stored occurrences, newest first, one page. */
export async function recentOccurrences(db: ErrorDb, storage: Storage, groupId: string, limit: number, cursor?: string) {
  const query = db.selectFrom('error_occurrences').selectAll().where('group_id', '=', groupId)
  const rows = await pageAfter(query, cursor, limit, 'ts', 'id').execute()
  return toPage(rows, limit, (row) => [row.ts, row.id], (row) => occurrenceOf(storage, row))
}

function occurrenceOf(storage: Storage, row: ErrorTables['error_occurrences']): Static<typeof ErrorOccurrence> {
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    timestamp: isoTime(row.ts)!,
    receivedAt: isoTime(row.received_at)!,
    name: row.name,
    message: row.message,
    stack: row.stack,
    frames: row.frames !== null ? storage.parseJson<Frame[]>(row.frames) : row.stack !== null ? parseStackTrace(row.stack) : null,
    release: row.release,
    environment: row.environment,
    service: row.service,
    request: row.request === null ? null : storage.parseJson<Record<string, unknown>>(row.request),
    ...occurrenceLinks(storage.parseJson<Record<string, unknown>>(row.metadata)),
    breadcrumbs: row.breadcrumbs === null || row.breadcrumbs === undefined ? [] : storage.parseJson<BreadcrumbValue[]>(row.breadcrumbs),
    reportedBy: row.reported_by ? row.reported_by.split(',') : [],
  }
}

function occurrenceLinks(metadata: Record<string, unknown>) {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null)
  return { metadata, traceId: text(metadata.traceId), spanId: text(metadata.spanId) }
}

export const TraceOccurrence = named('TraceErrorOccurrence', Type.Object({
  ...ErrorOccurrence.properties,
  groupFingerprint: Type.String({ description: 'the fingerprint its group is known by: `GET /api/errors/groups/{fingerprint}`' }),
  groupName: Type.String(),
  groupStatus: GroupStatusSchema,
}, { description: 'An occurrence with the group it belongs to.' }))

/** A project's stored occurrences in one trace, newest first, with their groups. */
export async function occurrencesOfTrace(db: ErrorDb, storage: Storage, projectId: string, traceId: string, limit: number, cursor?: string) {
  const query = db
    .selectFrom('error_occurrences')
    .innerJoin('error_groups', 'error_groups.id', 'error_occurrences.group_id')
    .selectAll('error_occurrences')
    .select(['error_groups.fingerprint as group_fingerprint', 'error_groups.name as group_name', 'error_groups.status as group_status'])
    .where('error_occurrences.project_id', '=', projectId)
    .where('error_occurrences.trace_id', '=', traceId)
  const rows = await pageAfter(query, cursor, limit, 'error_occurrences.ts', 'error_occurrences.id').execute()
  return toPage(rows, limit, (row) => [row.ts, row.id], (row): Static<typeof TraceOccurrence> => ({
    ...occurrenceOf(storage, row),
    groupFingerprint: row.group_fingerprint,
    groupName: row.group_name,
    groupStatus: row.group_status,
  }))
}

/** Stored occurrences of a project per time bucket over [from, to): the buckets start at multiples of `bucketMs` since the epoch. */
export async function occurrenceHistogram(db: ErrorDb, projectId: string, fromMs: number, toMs: number, bucketMs: number) {
  const bucket = sql<number>`cast(ts / ${sql.lit(bucketMs)} as bigint)`
  const rows = await db
    .selectFrom('error_occurrences')
    .select((eb) => [bucket.as('bucket'), eb.fn.countAll().as('count')])
    .where('project_id', '=', projectId)
    .where('ts', '>=', fromMs)
    .where('ts', '<', toMs)
    .groupBy(bucket)
    .execute()
  const counts = new Map(rows.map((row) => [Number(row.bucket), Number(row.count)]))
  const buckets = []
  for (let start = Math.floor(fromMs / bucketMs) * bucketMs; start < toMs; start += bucketMs) {
    buckets.push({ start: isoTime(start)!, count: counts.get(start / bucketMs) ?? 0 })
  }
  return buckets
}

const FacetValue = Type.Object({ value: Type.String(), count: Type.Integer({ description: 'occurrences that named it, exact' }), firstSeen: Time, lastSeen: Time })

export const ErrorGroupTags = named('ErrorGroupTags', Type.Object({
  data: Type.Array(
    Type.Object({
      key: Type.String({ description: 'environment, release, service, user (`id:…`, `email:…`, `ip:…`), or a tag’s own name (`tags.NAME` when that is one of these)' }),
      distinctValues: Type.Integer({ description: 'how many values the key has in the group' }),
      count: Type.Integer({ description: 'occurrences that named the key' }),
      topValues: Type.Array(FacetValue, { description: 'the most frequent values, most frequent first' }),
    }),
    { description: 'every tag key the group’s occurrences named, the most named first' },
  ),
}, { description: 'Tags as facets: the distribution of each tag key over a group’s occurrences.' }))

/**
 * The top `valuesPerKey` values of each tag key of a group with their counts, from the tag rows kept as
 * occurrences are folded in: one grouped read ranked by a window function, the same SQL on SQLite and PostgreSQL.
 */
export async function groupTags(db: ErrorDb, groupId: string, valuesPerKey: number): Promise<Static<typeof ErrorGroupTags>> {
  const values = db
    .selectFrom('error_fingerprint_tags')
    .select((eb) => ['key', 'value', eb.fn.sum<number>('count').as('count'), eb.fn.min('first_seen').as('first_seen'), eb.fn.max('last_seen').as('last_seen')])
    .where('group_id', '=', groupId)
    .groupBy(['key', 'value'])
  const count = sql.ref('count')
  const key = sql.ref('key')
  const ranked = await db
    .with('tag_values', () => values)
    .with('ranked', (qb) =>
      qb
        .selectFrom('tag_values')
        .select([
          'key',
          'value',
          'count',
          'first_seen',
          'last_seen',
          sql<number>`row_number() over (partition by ${key} order by ${count} desc, ${sql.ref('value')})`.as('rank'),
          sql<number>`count(*) over (partition by ${key})`.as('distinct_values'),
          sql<number>`sum(${count}) over (partition by ${key})`.as('key_count'),
        ]),
    )
    .selectFrom('ranked')
    .selectAll()
    .where('rank', '<=', valuesPerKey)
    .execute()
  const byKey = new Map<string, Static<typeof ErrorGroupTags>['data'][number]>()
  for (const row of ranked) {
    let facet = byKey.get(row.key)
    if (!facet) byKey.set(row.key, (facet = { key: tagKeyShown(row.key), distinctValues: Number(row.distinct_values), count: Number(row.key_count), topValues: [] }))
    facet.topValues.push({ value: row.value, count: Number(row.count), firstSeen: isoTime(row.first_seen)!, lastSeen: isoTime(row.last_seen)! })
  }
  for (const facet of byKey.values()) facet.topValues.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value))
  return { data: [...byKey.values()].sort((a, b) => b.count - a.count || a.key.localeCompare(b.key)) }
}
