import { Type, type Static } from 'typebox'
import type { PortalContext } from '../context.ts'
import { named } from '../http/openapi-components.ts'
import { ProblemError } from '../http/problem.ts'
import { newId } from '../ids.ts'
import { rowWrite, type Storage } from '../storage/storage.ts'
import { findGroup, groupFingerprints, GroupStatusSchema, usersAffected, withNotFound } from './group-reads.ts'
import { foldCounts, lockFingerprintsAndGroups, lockProjectGroups, OCCURRENCES_KEPT_PER_GROUP, trimOccurrences, UNTRIAGED, upsertGroups } from './group-store.ts'
import { errorDb, type ErrorDb, type ErrorTables, type GroupRow, type GroupStatus, type ResolvedIn } from './tables.ts'

// Every row that belongs to a fingerprint carries its group, so moving a fingerprint moves these.
const FINGERPRINT_TABLES = ['error_fingerprints', 'error_fingerprint_days', 'error_fingerprint_tags', 'error_occurrences', 'error_trimmed_minutes'] as const

/** A triage: the status, and what it may say beyond it, named as Sentry's `statusDetails`. */
export const GroupTriageBody = named(
  'ErrorGroupTriage',
  Type.Object(
    {
      status: GroupStatusSchema,
      statusDetails: Type.Optional(
        Type.Object(
          {
            inNextRelease: Type.Optional(Type.Literal(true, { description: 'with resolved: stays resolved for the releases named so far' })),
            inRelease: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'with resolved: fixed in this release' })),
            ignoreCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'with ignored: until this many more occurrences' })),
            ignoreUserCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'with ignored: until this many more users affected' })),
            ignoreUntil: Type.Optional(Type.String({ format: 'date-time', description: 'with ignored: until this time, in the future' })),
            ignoreDuration: Type.Optional(Type.Integer({ minimum: 1, maximum: 525_600, description: 'with ignored: for this many minutes (at most a year); not with ignoreUntil' })),
          },
          { additionalProperties: false, description: 'conditions of the status, named as Sentry’s; 400 when one does not fit the status or another' },
        ),
      ),
    },
    {
      additionalProperties: false,
      examples: [{ status: 'resolved' }, { status: 'resolved', statusDetails: { inNextRelease: true } }, { status: 'ignored', statusDetails: { ignoreCount: 100, ignoreDuration: 1440 } }],
    },
  ),
)

type StatusDetails = NonNullable<Static<typeof GroupTriageBody>['statusDetails']>

/** A status change's conditions, checked: how it stays resolved, or until when it stays ignored. */
interface StatusConditions {
  resolvedIn: ResolvedIn | null
  inRelease: string | null
  ignoredUntil: number | null
  ignoreCount: number | null
  ignoreUserCount: number | null
}

/** Checks that the details fit the status and each other; a 400 names the detail that does not. */
export function statusConditions(status: GroupStatus, details: StatusDetails, now: number): StatusConditions {
  const refuse = (field: keyof StatusDetails, problem: string) => new ProblemError(400, 'invalid_request', `body.statusDetails.${field}: ${problem}`)
  const given = (Object.keys(details) as (keyof StatusDetails)[]).filter((field) => details[field] !== undefined)
  for (const field of given) {
    const fits = field === 'inNextRelease' || field === 'inRelease' ? 'resolved' : 'ignored'
    if (status !== fits) throw refuse(field, `only with status ${fits}`)
  }
  if (details.inNextRelease && details.inRelease !== undefined) throw refuse('inRelease', 'give inNextRelease or inRelease, not both')
  if (details.ignoreUntil !== undefined && details.ignoreDuration !== undefined) throw refuse('ignoreDuration', 'give ignoreUntil or ignoreDuration, not both')
  let ignoredUntil: number | null = null
  if (details.ignoreUntil !== undefined) {
    ignoredUntil = Date.parse(details.ignoreUntil)
    if (!(ignoredUntil > now)) throw refuse('ignoreUntil', 'must be in the future')
  }
  if (details.ignoreDuration !== undefined) ignoredUntil = now + details.ignoreDuration * 60_000
  return {
    resolvedIn: details.inNextRelease ? 'next_release' : details.inRelease !== undefined ? 'release' : null,
    inRelease: details.inRelease ?? null,
    ignoredUntil,
    ignoreCount: details.ignoreCount ?? null,
    ignoreUserCount: details.ignoreUserCount ?? null,
  }
}

/**
 * Sets a group's status with its conditions (checked by statusConditions); triage also clears
 * `regressed` and `unignored`. Resolved in a release, the group lists the releases whose occurrences
 * leave it resolved; ignored until more occurrences or users, it keeps the count at which it returns.
 */
export function setGroupStatus(ctx: PortalContext, orgId: string, fingerprint: string, status: GroupStatus, conditions: StatusConditions): Promise<GroupRow> {
  return withLockedGroup(ctx, orgId, fingerprint, [], async (trx, group) => {
    const resolution = conditions.resolvedIn === null ? null : await releasesBeforeResolution(trx, group.project_id, conditions.inRelease)
    const users = conditions.ignoreUserCount === null ? 0 : ((await usersAffected(trx, [group.id])).get(group.id) ?? 0)
    const change = {
      status,
      regressed: 0,
      unignored: 0,
      status_changed_at: Date.now(),
      resolved_in: conditions.resolvedIn,
      resolved_release: resolution?.release ?? null,
      ignored_until: conditions.ignoredUntil,
      ignored_until_count: conditions.ignoreCount === null ? null : group.count + conditions.ignoreCount,
      ignored_until_users: conditions.ignoreUserCount === null ? null : users + conditions.ignoreUserCount,
    }
    await trx.updateTable('error_groups').set(change).where('id', '=', group.id).execute()
    await trx.deleteFrom('error_group_resolution_releases').where('group_id', '=', group.id).execute()
    if (resolution) await ctx.storage.writeRows(trx, RESOLUTION_RELEASE_INSERT, resolution.kept.map((release) => ({ group_id: group.id, release })))
    return { ...group, ...change }
  })
}

type ResolutionRelease = ErrorTables['error_group_resolution_releases']
const RESOLUTION_RELEASE_INSERT = rowWrite<ResolutionRelease>(['group_id', 'release'], (db, rows) => errorDb(db).insertInto('error_group_resolution_releases').values(rows))

/**
 * The releases whose occurrences leave a group resolved, judged as Sentry does by when each release
 * first appeared (here: first named by an occurrence of the project's errors). In the next release:
 * every release named so far, and `release` is the newest of them. In release X: those first named
 * before X (all named so far when X is not yet), never X itself.
 */
async function releasesBeforeResolution(trx: ErrorDb, projectId: string, inRelease: string | null): Promise<{ release: string | null; kept: string[] }> {
  // Other groups' captures not folded yet named releases too. One statement, so one snapshot on PostgreSQL: two would
  // miss a release whose deltas a fold moved into the tags between them.
  const named = await trx
    .selectFrom('error_fingerprint_tags')
    .innerJoin('error_groups', 'error_groups.id', 'error_fingerprint_tags.group_id')
    .select((eb) => ['error_fingerprint_tags.value as release', eb.fn.min('error_fingerprint_tags.first_seen').as('first_seen')])
    .where('error_groups.project_id', '=', projectId)
    .where('error_fingerprint_tags.key', '=', 'release')
    .groupBy('error_fingerprint_tags.value')
    .unionAll((db) =>
      db
        .selectFrom('error_count_deltas')
        .select((eb) => ['release', eb.fn.min('first_seen').as('first_seen')])
        .where('project_id', '=', projectId)
        .where('release', 'is not', null)
        .groupBy('release')
        .$narrowType<{ release: string }>(),
    )
    .execute()
  const firstNamed = new Map<string, number>()
  for (const { release, first_seen } of named) {
    if (release !== null) firstNamed.set(release, Math.min(firstNamed.get(release) ?? Infinity, Number(first_seen)))
  }
  const inOrder = [...firstNamed.entries()].sort(([a, at], [b, bt]) => at - bt || (a < b ? -1 : 1))
  if (inRelease === null) return { release: inOrder.at(-1)?.[0] ?? null, kept: inOrder.map(([release]) => release) }
  const fixedAt = firstNamed.get(inRelease) ?? Infinity
  return { release: inRelease, kept: inOrder.filter(([release, at]) => release !== inRelease && at < fixedAt).map(([release]) => release) }
}

/**
 * Moves the groups of `fingerprints` into the group of `fingerprint`: it then answers to all their
 * fingerprints, counts are summed, later occurrences of any of them join it, and it keeps its status.
 */
export function mergeGroups(ctx: PortalContext, orgId: string, fingerprint: string, fingerprints: string[]): Promise<GroupRow> {
  return withLockedGroup(ctx, orgId, fingerprint, fingerprints, async (trx, target) => {
    const sourceIds = new Set<string>()
    for (const [index, other] of fingerprints.entries()) {
      const source = await withNotFound(findGroup(trx, orgId, other), new ProblemError(404, 'not_found', `fingerprints.${index}: error group ${other} was not found`))
      if (source.project_id !== target.project_id) {
        throw new ProblemError(422, 'other_project', `fingerprints.${index}: belongs to another project; only groups of one project merge`)
      }
      if (source.id !== target.id) sourceIds.add(source.id)
    }
    if (sourceIds.size === 0) return target
    for (const table of FINGERPRINT_TABLES) {
      await trx.updateTable(table).set({ group_id: target.id }).where('group_id', 'in', [...sourceIds]).execute()
    }
    await trx.deleteFrom('error_groups').where('id', 'in', [...sourceIds]).execute()
    await trx.deleteFrom('error_group_resolution_releases').where('group_id', 'in', [...sourceIds]).execute()
    const merged = await refreshGroup(trx, ctx.storage, target)
    if (merged.count > OCCURRENCES_KEPT_PER_GROUP) await trimOccurrences(trx, ctx.storage, merged.id)
    return merged
  })
}

/** Takes `fingerprints` out of the group of `fingerprint`, each into a new unresolved group of its own. */
export function unmergeFingerprints(ctx: PortalContext, orgId: string, fingerprint: string, fingerprints: string[]): Promise<{ group: GroupRow; unmerged: GroupRow[] }> {
  return withLockedGroup(ctx, orgId, fingerprint, [], async (trx, group) => {
    const heldSet = new Set((await groupFingerprints(trx, [group.id])).map((row) => row.fingerprint))
    fingerprints.forEach((other, index) => {
      if (!heldSet.has(other)) throw new ProblemError(422, 'not_in_group', `fingerprints.${index}: is not a fingerprint of this group`)
    })
    const leaving = [...new Set(fingerprints)]
    if (leaving.length >= heldSet.size) throw new ProblemError(422, 'last_fingerprint', 'fingerprints: a group keeps at least one of its fingerprints')
    const now = Date.now()
    const unmerged: GroupRow[] = []
    for (const other of leaving) {
      const { algorithm } = await trx.selectFrom('error_fingerprints').select('algorithm').where('fingerprint', '=', other).executeTakeFirstOrThrow()
      const row: GroupRow = { ...group, ...UNTRIAGED, id: newId('grp', now), fingerprint: other, status_changed_at: null, created_at: now, algorithm }
      await upsertGroups(trx, ctx.storage, [row])
      for (const table of FINGERPRINT_TABLES) {
        // group_id first: it is what every one of these tables is indexed by.
        await trx.updateTable(table).set({ group_id: row.id }).where('group_id', '=', group.id).where('fingerprint', '=', other).execute()
      }
      unmerged.push(await refreshGroup(trx, ctx.storage, row))
    }
    return { group: await refreshGroup(trx, ctx.storage, group), unmerged }
  })
}

/**
 * Finds the group (and the groups of `others`), takes its project's lock, then the locks captures take
 * on every fingerprint of these groups and on the groups, and reads it again: a merge may have moved it meanwhile.
 */
async function withLockedGroup<T>(
  ctx: PortalContext,
  orgId: string,
  fingerprint: string,
  others: string[],
  change: (trx: ErrorDb, group: GroupRow) => Promise<T>,
): Promise<T> {
  return errorDb(ctx.storage.db).transaction().execute(async (trx) => {
    const unlocked = await findGroup(trx, orgId, fingerprint)
    await lockProjectGroups(trx, ctx, unlocked.project_id)
    const groupIds = [unlocked.id]
    if (others.length > 0) {
      const rows = await trx.selectFrom('error_fingerprints').select('group_id').where('fingerprint', 'in', others).where('project_id', '=', unlocked.project_id).execute()
      groupIds.push(...rows.map((row) => row.group_id))
    }
    const held = await trx.selectFrom('error_fingerprints').select('fingerprint').where('group_id', 'in', groupIds).execute()
    await lockFingerprintsAndGroups(trx, ctx, held.map((row) => row.fingerprint), groupIds)
    // Captures committed before the locks left deltas under these groups; they move with the group's rows.
    await foldCounts(trx, ctx.storage, groupIds)
    return change(trx, await findGroup(trx, orgId, fingerprint))
  })
}

/** Recomputes a group's totals from its fingerprints, its text from its latest occurrence, and its primary fingerprint. */
async function refreshGroup(trx: ErrorDb, storage: Storage, group: GroupRow): Promise<GroupRow> {
  const fingerprints = await groupFingerprints(trx, [group.id])
  const latest = await trx
    .selectFrom('error_occurrences')
    .select(['name', 'message'])
    .where('group_id', '=', group.id)
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()
  const refreshed: GroupRow = {
    ...group,
    fingerprint: fingerprints.some((row) => row.fingerprint === group.fingerprint) ? group.fingerprint : fingerprints[0].fingerprint,
    name: latest?.name ?? group.name,
    message: latest?.message ?? group.message,
    count: fingerprints.reduce((sum, row) => sum + row.count, 0),
    first_seen: Math.min(...fingerprints.map((row) => row.firstSeen)),
    last_seen: Math.max(...fingerprints.map((row) => row.lastSeen)),
  }
  await upsertGroups(trx, storage, [refreshed])
  return refreshed
}
