import type { PortalContext } from '../context.ts'
import { ProblemError } from '../http/problem.ts'
import { newId } from '../ids.ts'
import type { Storage } from '../storage/storage.ts'
import { findGroup, groupFingerprints, withNotFound } from './group-reads.ts'
import { foldCounts, lockFingerprintsAndGroups, lockProjectGroups, OCCURRENCES_KEPT_PER_GROUP, trimOccurrences, upsertGroups } from './group-store.ts'
import { errorDb, type ErrorDb, type GroupRow, type GroupStatus } from './tables.ts'

// Every row that belongs to a fingerprint carries its group, so moving a fingerprint moves these.
const FINGERPRINT_TABLES = ['error_fingerprints', 'error_fingerprint_days', 'error_fingerprint_tags', 'error_occurrences'] as const

/** Sets a group's status; triage also clears `regressed`. */
export function setGroupStatus(ctx: PortalContext, orgId: string, fingerprint: string, status: GroupStatus): Promise<GroupRow> {
  return withLockedGroup(ctx, orgId, fingerprint, [], async (trx, group) => {
    const changed = { ...group, status, regressed: 0, status_changed_at: Date.now() }
    await trx.updateTable('error_groups').set({ status, regressed: 0, status_changed_at: changed.status_changed_at }).where('id', '=', group.id).execute()
    return changed
  })
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
    const merged = await refreshGroup(trx, ctx.storage, target)
    if (merged.count > OCCURRENCES_KEPT_PER_GROUP) await trimOccurrences(trx, merged.id)
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
      const row: GroupRow = { ...group, id: newId('grp', now), fingerprint: other, status: 'unresolved', regressed: 0, status_changed_at: null, created_at: now, algorithm }
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
