import { sql } from 'kysely'
import type { PortalContext, WriteContext } from '../context.ts'
import { isoTime, newId } from '../ids.ts'
import { ListStatement, rowWrite, type Storage } from '../storage/storage.ts'
import { tablesOf, type Connection } from '../storage/tables.ts'
import type { TablesByName } from '../modules/module.ts'
import type { Grouping } from './fingerprint.ts'
import type { Frame } from './stack-trace.ts'
import type { Breadcrumb } from './occurrence-context.ts'
import { findSecondReports, mergeSecondReports } from './second-reports.ts'
import { errorDb, type ErrorDb, type ErrorTables, type GroupRow, type Totals } from './tables.ts'

/** The most recent occurrences kept per group; older ones are deleted, counts stay exact. */
export const OCCURRENCES_KEPT_PER_GROUP = 100

/** An exception occurrence, grouped already, on its way into storage. */
export interface Occurrence {
  id: string
  projectId: string
  ts: number
  receivedAt: number
  name: string
  message: string
  stack: string | null
  /** structured frames as given; frames parsed from `stack` are parsed again when read, not stored twice */
  frames: Frame[] | null
  release: string | null
  environment: string | null
  service: string | null
  request: Record<string, unknown> | null
  metadata: Record<string, unknown>
  breadcrumbs: Breadcrumb[] | null
  /** tag keys and values counted per group beyond environment, release and service (occurrence-context.ts) */
  tags: Record<string, string>
  grouping: Grouping
}

export interface RecordedOccurrence {
  id: string
  fingerprint: string
  /** the fingerprint the group is known by; another one when this fingerprint was merged into it */
  groupFingerprint: string
  isNewGroup: boolean
}

type FingerprintRow = Pick<ErrorTables['error_fingerprints'], 'fingerprint' | 'project_id' | 'group_id'>

interface TouchedGroup {
  row: GroupRow
  isNew: boolean
  regressedNow: boolean
}

/** The triage state of a group nobody has triaged: what a new group, or one an unmerge makes, starts with. */
export const UNTRIAGED = {
  status: 'unresolved',
  regressed: 0,
  unignored: 0,
  resolved_in: null,
  resolved_release: null,
  ignored_until: null,
  ignored_until_count: null,
  ignored_until_users: null,
} as const satisfies Partial<GroupRow>

/** The values of an occurrence a group is filtered by and shows; in `error_fingerprint_tags`. */
export const TAG_KEYS = ['environment', 'release', 'service'] as const

const DAY_MS = 86_400_000
const MAX_KEYS_PER_SELECT = 5_000

/**
 * Stores occurrences in their groups inside `trx`: a fingerprint seen for the first time opens a
 * group (announced as error.group.created), an occurrence of a resolved group reopens it as
 * regressed (error.group.regressed). A fingerprint seen for the first time is locked alone, so that
 * captures of one new error racing on several connections or portals open exactly one group; known
 * fingerprints and their groups are locked in share mode, against merges and triage only. Counts are
 * appended (`error_count_deltas`), not added to the group's rows, so that captures of the same errors
 * on several portals never wait for each other; `foldCounts` adds them up before every read.
 */
export async function recordOccurrences(connection: Connection, ctx: WriteContext, reports: Occurrence[]): Promise<RecordedOccurrence[]> {
  const trx = errorDb(connection)
  // A second report of a stored exception (Sentry and OpenTelemetry for one span) is merged into it, not stored.
  const seconds = await findSecondReports(trx, ctx, reports)
  const occurrences = seconds.size === 0 ? reports : reports.filter((report) => !seconds.has(report))
  const byProject = new Map<string, Occurrence[]>()
  for (const occurrence of occurrences) {
    const list = byProject.get(occurrence.projectId)
    if (list) list.push(occurrence)
    else byProject.set(occurrence.projectId, [occurrence])
  }
  // The occurrences go in first, under the group their fingerprint had when read without a lock (or the
  // group they would open): the heaviest rows of the transaction conflict with nothing, and the locks
  // below are held only for the totals and the commit. One that raced another portal is moved after.
  const firstOfFingerprint = new Map<string, Occurrence>()
  for (const occurrence of occurrences) if (!firstOfFingerprint.has(occurrence.grouping.fingerprint)) firstOfFingerprint.set(occurrence.grouping.fingerprint, occurrence)
  const fingerprintList = [...firstOfFingerprint.keys()]
  const unlocked = await loadFingerprints(trx, fingerprintList)
  // A fingerprint not seen before may belong to a group an earlier algorithm opened: the fingerprints
  // those algorithms give the occurrence find it, the newest known first (computed for these only: most
  // occurrences are of known fingerprints).
  const earlierOf = new Map<string, string[]>()
  for (const [fingerprint, occurrence] of firstOfFingerprint) {
    const earlier = unlocked.has(fingerprint) ? undefined : occurrence.grouping.earlier?.()
    if (earlier && earlier.length > 0) earlierOf.set(fingerprint, earlier.map((entry) => entry.fingerprint))
  }
  const earlierRows = earlierOf.size > 0 ? await loadFingerprints(trx, [...new Set([...earlierOf.values()].flat())]) : new Map<string, FingerprintRow>()
  const previous = new Map<string, string>()
  for (const [fingerprint, earlier] of earlierOf) {
    const known = earlier.find((candidate) => earlierRows.has(candidate))
    if (known !== undefined) previous.set(fingerprint, known)
  }
  const previousRows = new Map([...previous.values()].map((fingerprint) => [fingerprint, earlierRows.get(fingerprint)!]))
  const guessedGroup = new Map(
    fingerprintList.map((fingerprint) => [
      fingerprint,
      unlocked.get(fingerprint)?.group_id ?? previousRows.get(previous.get(fingerprint)!)?.group_id ?? newId('grp', firstOfFingerprint.get(fingerprint)!.receivedAt),
    ]),
  )
  const { storage } = ctx
  await storage.writeRows(trx, OCCURRENCE_INSERT, occurrences.map((occurrence) => occurrenceRow(occurrence, guessedGroup.get(occurrence.grouping.fingerprint)!)))

  // A known fingerprint keeps its group until a merge or an unmerge, which lock it alone; so do the
  // fingerprint of a stored occurrence another receiver reported first, and an earlier algorithm's
  // fingerprint, which only its group is read of.
  const firstReported = [...new Set([...seconds.values()].map((first) => first.fingerprint))]
  const earlierFingerprints = [...previousRows.keys()]
  const alsoLocked = [...new Set([...firstReported, ...earlierFingerprints])].filter((fingerprint) => !firstOfFingerprint.has(fingerprint))
  const fingerprints = await lockFingerprints(trx, ctx, [...fingerprintList, ...alsoLocked], [...unlocked.keys(), ...alsoLocked])
  const groups = await lockGroups(trx, ctx, [...new Set([...fingerprints.values()].map((row) => row.group_id))], true)
  const recorded = new Map<Occurrence, RecordedOccurrence>()
  for (const [projectId, items] of byProject) {
    const results = await recordProjectOccurrences(trx, ctx, projectId, items, fingerprints, groups, guessedGroup, previous)
    items.forEach((item, index) => recorded.set(item, results[index]))
  }
  await moveMisplacedOccurrences(trx, occurrences, fingerprints, guessedGroup)
  if (seconds.size > 0) {
    const groupOf = (fingerprint: string) => fingerprints.get(fingerprint)!.group_id
    await mergeSecondReports(trx, storage, seconds, groupOf, (rows) => storage.writeRows(trx, COUNT_DELTA_INSERT, rows))
    for (const [second, first] of seconds) {
      recorded.set(second, { id: first.id, fingerprint: first.fingerprint, groupFingerprint: groups.get(groupOf(first.fingerprint))!.row.fingerprint, isNewGroup: false })
    }
  }
  return reports.map((report) => recorded.get(report)!)
}

/** Moves the occurrences written under a guessed group that another portal's capture or a merge changed meanwhile. */
async function moveMisplacedOccurrences(trx: ErrorDb, occurrences: Occurrence[], fingerprints: Map<string, FingerprintRow>, guessedGroup: Map<string, string>) {
  const misplaced = new Map<string, string[]>()
  for (const occurrence of occurrences) {
    const fingerprint = occurrence.grouping.fingerprint
    const groupId = fingerprints.get(fingerprint)!.group_id
    if (groupId === guessedGroup.get(fingerprint)) continue
    const ids = misplaced.get(groupId)
    if (ids) ids.push(occurrence.id)
    else misplaced.set(groupId, [occurrence.id])
  }
  for (const [groupId, ids] of misplaced) {
    for (let start = 0; start < ids.length; start += MAX_KEYS_PER_SELECT) {
      await trx.updateTable('error_occurrences').set({ group_id: groupId }).where('id', 'in', ids.slice(start, start + MAX_KEYS_PER_SELECT)).execute()
    }
  }
}

/**
 * Serialises triage, merge and unmerge of one project's groups among themselves, so that the
 * fingerprints of a group they read stay its own until they lock them. Captures never take it.
 */
export function lockProjectGroups(trx: Connection, ctx: WriteContext, projectId: string): Promise<void> {
  return ctx.storage.lockInTransaction(trx, `error-groups:${projectId}`)
}

/** Locks fingerprints and then groups, in the order captures take them: what changes a group holds both. */
export async function lockFingerprintsAndGroups(trx: ErrorDb, ctx: WriteContext, fingerprints: string[], groupIds: string[]): Promise<void> {
  await lockFingerprints(trx, ctx, fingerprints)
  await lockGroupIds(trx, ctx, groupIds)
}

const fingerprintLock = (fingerprint: string) => `error-fingerprint:${fingerprint}`
const groupLock = (id: string) => `error-group:${id}`

/** Locks `fingerprints`, those in `shared` in share mode, and reads their groups. */
async function lockFingerprints(trx: ErrorDb, ctx: WriteContext, fingerprints: string[], shared: string[] = []): Promise<Map<string, FingerprintRow>> {
  await ctx.storage.lockInTransaction(trx, fingerprints.map(fingerprintLock), new Set(shared.map(fingerprintLock)))
  return loadFingerprints(trx, fingerprints)
}

/** Locks groups, in share mode with `shared`, and reads them. */
async function lockGroups(trx: ErrorDb, ctx: WriteContext, groupIds: string[], shared = false): Promise<Map<string, TouchedGroup>> {
  await lockGroupIds(trx, ctx, groupIds, shared)
  return loadGroups(trx, groupIds)
}

/** Locks groups without reading them: a fold adds to their rows in SQL, and reading a thousand rows took about a fifth of its time. */
function lockGroupIds(trx: ErrorDb, ctx: WriteContext, groupIds: string[], shared = false): Promise<void> {
  const names = groupIds.map(groupLock)
  return ctx.storage.lockInTransaction(trx, names, shared ? new Set(names) : undefined)
}

async function recordProjectOccurrences(
  trx: ErrorDb,
  ctx: WriteContext,
  projectId: string,
  items: Occurrence[],
  fingerprints: Map<string, FingerprintRow>,
  groups: Map<string, TouchedGroup>,
  guessedGroup: Map<string, string>,
  previous: Map<string, string>,
): Promise<RecordedOccurrence[]> {
  const newFingerprints: FingerprintInsert[] = []
  const newGroups: GroupRow[] = []
  const deltas = new Map<string, CountDelta>()
  const touchedGroups = new Set<TouchedGroup>()
  const staysResolved = await releasesKeepingResolved(trx, groups, items)

  const results = items.map((occurrence) => {
    const fingerprint = occurrence.grouping.fingerprint
    let known = fingerprints.get(fingerprint)
    if (!known) {
      // The group of the earlier algorithm's fingerprint takes the new one: its regression reopens it rather than opening another.
      const earlier = fingerprints.get(previous.get(fingerprint) ?? '')
      const groupId = earlier && earlier.project_id === projectId ? earlier.group_id : openGroup(groups, projectId, occurrence, guessedGroup.get(fingerprint)!)
      known = { fingerprint, project_id: projectId, group_id: groupId }
      fingerprints.set(fingerprint, known)
      const { algorithm, components } = occurrence.grouping
      newFingerprints.push({ ...known, algorithm, components: JSON.stringify(components) })
      // Its counts come with the others' deltas; the row holds none yet.
      if (!earlier) newGroups.push({ ...groups.get(known.group_id)!.row })
    }
    const groupId = known.group_id
    const group = groups.get(groupId)!
    const isNewGroup = group.isNew && !touchedGroups.has(group)
    // Only the opened groups' totals count whole here (the created announcement); a known group's
    // row counts what is folded, and its announcement reads the deltas too.
    addToGroup(group, occurrence, staysResolved)
    touchedGroups.add(group)
    const { environment, release, service } = occurrence
    const day = Math.floor(occurrence.ts / DAY_MS)
    const tags = tagsJson(occurrence.tags)
    const key = `${fingerprint}|${day}|${environment}|${release}|${service}|${tags}`
    let delta = deltas.get(key)
    if (!delta) {
      delta = { project_id: projectId, group_id: groupId, fingerprint, day, environment, release, service, count: 0, first_seen: occurrence.ts, last_seen: occurrence.ts, name: occurrence.name, message: occurrence.message, tags, enriches: 0 }
      deltas.set(key, delta)
    }
    if (occurrence.ts >= delta.last_seen) {
      delta.name = occurrence.name
      delta.message = occurrence.message
    }
    countInto(delta, occurrence.ts)
    return { id: occurrence.id, fingerprint, groupFingerprint: group.row.fingerprint, isNewGroup }
  })

  const { storage } = ctx
  await upsertGroups(trx, storage, newGroups)
  await storage.writeRows(trx, FINGERPRINT_INSERT, newFingerprints)
  await storage.writeRows(trx, COUNT_DELTA_INSERT, [...deltas.values()])
  for (const group of touchedGroups) {
    if (group.isNew) await ctx.notifications.publish(trx, projectId, 'error.group.created', notificationData(group.row))
    if (group.regressedNow && (await reopenGroup(trx, group.row))) {
      await ctx.notifications.publish(trx, projectId, 'error.group.regressed', notificationData(await withDeltas(trx, group.row.id)))
    }
  }
  return results
}

/**
 * Reopens a resolved group as regressed; false when another capture did first (it holds the row's
 * lock until it commits, then this one finds the group unresolved).
 */
async function reopenGroup(trx: ErrorDb, row: GroupRow): Promise<boolean> {
  const result = await trx
    .updateTable('error_groups')
    .set({ ...UNTRIAGED, regressed: 1, status_changed_at: row.status_changed_at })
    .where('id', '=', row.id)
    .where('status', '=', 'resolved')
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) === 0) return false
  await trx.deleteFrom('error_group_resolution_releases').where('group_id', '=', row.id).execute()
  return true
}

/** A group's row with the counts not folded into it yet, this transaction's included. */
async function withDeltas(trx: ErrorDb, groupId: string): Promise<GroupRow> {
  const row = await trx.selectFrom('error_groups').selectAll().where('id', '=', groupId).executeTakeFirstOrThrow()
  const deltas = await trx.selectFrom('error_count_deltas').selectAll().where('group_id', '=', groupId).where('enriches', '=', 0).execute()
  for (const delta of deltas) addDelta(row, delta)
  return row
}

/** Adds a delta's counts to a group's totals; the group reads like its latest occurrence. */
function addDelta(row: GroupTotals, delta: CountDelta) {
  if (delta.last_seen >= row.last_seen) {
    row.name = delta.name
    row.message = delta.message
  }
  row.count += delta.count
  row.first_seen = Math.min(row.first_seen, delta.first_seen)
  row.last_seen = Math.max(row.last_seen, delta.last_seen)
}

/**
 * Adds the appended counts of the project's groups (all of them when `groupIds` is not given) to their
 * group, day and tag rows, before a read of its groups. One fold of a project runs at a time, over
 * every portal; captures go on meanwhile (they only take the groups' share locks). With `unlessBusy`
 * (the background job) a project another portal is folding is left to it rather than waited for.
 */
export async function foldProjectCounts(ctx: PortalContext, projectId: string, groupIds?: string[], { unlessBusy = false } = {}): Promise<void> {
  const db = errorDb(ctx.storage.db)
  let query = db.selectFrom('error_count_deltas').select('group_id').distinct().where('project_id', '=', projectId)
  if (groupIds !== undefined) query = query.where('group_id', 'in', groupIds)
  const pending = (await query.execute()).map((row) => row.group_id)
  if (pending.length === 0) return
  await db.transaction().execute(async (trx) => {
    const lock = `error-counts:${projectId}`
    if (!unlessBusy) await ctx.storage.lockInTransaction(trx, lock)
    else if (!(await ctx.storage.tryLockInTransaction(trx, lock))) return
    await lockGroupIds(trx, ctx, pending, true)
    await foldCounts(trx, ctx.storage, pending)
  })
}

/** Folds the appended counts of every project, a few at a time (the job that keeps the deltas short). */
export async function foldAllCounts(ctx: PortalContext): Promise<void> {
  const projects = await errorDb(ctx.storage.db).selectFrom('error_count_deltas').select('project_id').distinct().execute()
  for (const { project_id } of projects) await foldProjectCounts(ctx, project_id, undefined, { unlessBusy: true })
}

/**
 * Moves the deltas of `groupIds` into their group, day and tag rows, and trims the groups' stored
 * occurrences. The caller holds the groups' locks, and either the project's `error-counts` lock or
 * the groups' own exclusively, so that no other fold of these groups runs at the same time.
 */
export async function foldCounts(trx: ErrorDb, storage: Storage, groupIds: string[]): Promise<void> {
  const deltas = await selectIn(groupIds, (chunk) => trx.deleteFrom('error_count_deltas').where('group_id', 'in', chunk).returningAll().execute())
  if (deltas.length === 0) return
  const groups = new Map<string, GroupTotals>()
  const days = new Map<string, DayTotals>()
  const tags = new Map<string, TagTotals>()
  for (const delta of deltas) {
    const { group_id, fingerprint, day } = delta
    const totals = { count: delta.count, first_seen: delta.first_seen, last_seen: delta.last_seen }
    for (const key of TAG_KEYS) {
      const value = delta[key]
      if (value !== null) addTotals(tags, `${fingerprint}|${key}|${value}`, { fingerprint, key, value, group_id, ...totals })
    }
    for (const [key, value] of Object.entries(delta.tags === null ? {} : storage.parseJson<Record<string, string>>(delta.tags))) {
      addTotals(tags, `${fingerprint}|${key}|${value}`, { fingerprint, key, value, group_id, ...totals })
    }
    // A second report of a stored occurrence adds what it names, not an occurrence.
    if (delta.enriches === 1) continue
    const group = groups.get(group_id)
    if (group) addDelta(group, delta)
    else groups.set(group_id, { ...totals, name: delta.name, message: delta.message })
    addTotals(days, `${fingerprint}|${day}`, { fingerprint, day, group_id, ...totals })
  }
  // Rows are written in key order, the same in every fold.
  const byKey = <R>(map: Map<string, R>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)
  await storage.writeRows(trx, GROUP_TOTALS_ADD, [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, totals]) => ({ id, ...totals })))
  await storage.writeRows(trx, DAY_TOTALS_UPSERT, byKey(days))
  await storage.writeRows(trx, TAG_TOTALS_UPSERT, byKey(tags))
  const counted = await selectIn([...groups.keys()], (chunk) => trx.selectFrom('error_groups').select(['id', 'count']).where('id', 'in', chunk).execute())
  for (const row of counted) if (row.count > OCCURRENCES_KEPT_PER_GROUP) await trimOccurrences(trx, storage, row.id)
}

function addTotals<R extends Totals>(map: Map<string, R>, key: string, row: R) {
  const totals = map.get(key)
  if (!totals) return void map.set(key, row)
  totals.count += row.count
  totals.first_seen = Math.min(totals.first_seen, row.first_seen)
  totals.last_seen = Math.max(totals.last_seen, row.last_seen)
}

const selectFingerprints = new ListStatement(
  (db, fingerprints: string[]) => errorDb(db).selectFrom('error_fingerprints').select(['fingerprint', 'project_id', 'group_id']).where('fingerprint', 'in', fingerprints),
  (fingerprint) => [fingerprint],
)

async function loadFingerprints(trx: ErrorDb, fingerprints: string[]): Promise<Map<string, FingerprintRow>> {
  const rows = await selectIn(fingerprints, (chunk) => selectFingerprints.execute(trx, chunk))
  return new Map(rows.map((row) => [row.fingerprint, row]))
}

const selectGroups = new ListStatement((db, ids: string[]) => errorDb(db).selectFrom('error_groups').selectAll().where('id', 'in', ids), (id) => [id])

async function loadGroups(trx: ErrorDb, ids: string[]): Promise<Map<string, TouchedGroup>> {
  const rows = await selectIn(ids, (chunk) => selectGroups.execute(trx, chunk))
  return new Map(rows.map((row) => [row.id, { row, isNew: false, regressedNow: false }]))
}

/** Rows matching a list of keys too long for one statement (an ingest batch may carry thousands). */
async function selectIn<R>(keys: string[], select: (chunk: string[]) => Promise<R[]>): Promise<R[]> {
  const rows: R[] = []
  for (let start = 0; start < keys.length; start += MAX_KEYS_PER_SELECT) rows.push(...(await select(keys.slice(start, start + MAX_KEYS_PER_SELECT))))
  return rows
}

/** A new group `id` for the occurrence's fingerprint, counting none yet; returns its id. */
function openGroup(groups: Map<string, TouchedGroup>, projectId: string, occurrence: Occurrence, id: string): string {
  const fingerprint = occurrence.grouping.fingerprint
  groups.set(id, {
    row: {
      id,
      project_id: projectId,
      fingerprint,
      name: occurrence.name,
      message: occurrence.message,
      ...UNTRIAGED,
      count: 0,
      first_seen: occurrence.ts,
      last_seen: occurrence.ts,
      status_changed_at: null,
      created_at: occurrence.receivedAt,
      algorithm: occurrence.grouping.algorithm,
    },
    isNew: true,
    regressedNow: false,
  })
  return id
}

function countInto(totals: Totals, ts: number) {
  totals.count++
  totals.first_seen = Math.min(totals.first_seen, ts)
  totals.last_seen = Math.max(totals.last_seen, ts)
}

function addToGroup(group: TouchedGroup, occurrence: Occurrence, staysResolved: (row: GroupRow, release: string | null) => boolean) {
  const row = group.row
  // The group reads like its latest occurrence.
  if (occurrence.ts >= row.last_seen) {
    row.name = occurrence.name
    row.message = occurrence.message
  }
  countInto(row, occurrence.ts)
  if (row.status === 'resolved' && !staysResolved(row, occurrence.release)) {
    // Written by reopenGroup, which finds whether this capture is the one that reopened it.
    Object.assign(row, { ...UNTRIAGED, regressed: 1, status_changed_at: occurrence.receivedAt })
    group.regressedNow = true
  }
}

/**
 * Which occurrences leave a group resolved in a release resolved: those without a release (as Sentry:
 * an application that sends none is taken as older) and those of the releases listed when it was resolved.
 * One read, for the batch's releases and its groups resolved so, only.
 */
async function releasesKeepingResolved(trx: ErrorDb, groups: Map<string, TouchedGroup>, items: Occurrence[]): Promise<(row: GroupRow, release: string | null) => boolean> {
  const groupIds = [...groups.values()].filter(({ row }) => row.status === 'resolved' && row.resolved_in !== null).map(({ row }) => row.id)
  const releases = [...new Set(items.map((item) => item.release).filter((release) => release !== null))]
  const kept = new Set<string>()
  if (groupIds.length > 0 && releases.length > 0) {
    const rows = await trx.selectFrom('error_group_resolution_releases').selectAll().where('group_id', 'in', groupIds).where('release', 'in', releases).execute()
    for (const row of rows) kept.add(`${row.group_id}\u0000${row.release}`)
  }
  return (row, release) => row.resolved_in !== null && (release === null || kept.has(`${row.id}\u0000${release}`))
}

const GROUP_COLUMNS = ['id', 'project_id', 'fingerprint', 'name', 'message', 'status', 'regressed', 'count', 'first_seen', 'last_seen', 'status_changed_at', 'created_at', 'algorithm'] as const

const GROUP_UPSERT = rowWrite<GroupRow>(GROUP_COLUMNS, (db, rows) =>
  errorDb(db)
    .insertInto('error_groups')
    .values(rows)
    .onConflict((conflict) =>
      conflict.column('id').doUpdateSet((eb) => ({
        fingerprint: eb.ref('excluded.fingerprint'),
        name: eb.ref('excluded.name'),
        message: eb.ref('excluded.message'),
        status: eb.ref('excluded.status'),
        regressed: eb.ref('excluded.regressed'),
        count: eb.ref('excluded.count'),
        first_seen: eb.ref('excluded.first_seen'),
        last_seen: eb.ref('excluded.last_seen'),
        status_changed_at: eb.ref('excluded.status_changed_at'),
      })),
    ),
)

/** Writes whole group rows: new ones are inserted, known ones (read under the lock) take the new totals. */
export function upsertGroups(trx: Connection, storage: Storage, rows: GroupRow[]) {
  return storage.writeRows(trx, GROUP_UPSERT, rows)
}

/**
 * Adds folded totals to their groups (the totals joined by id), written as `writeRows` writes many rows: a statement
 * built and compiled for each group, a thousand a second under load, took a tenth of the event loop. The group reads
 * like its latest occurrence.
 */
const GROUP_TOTALS_ADD = rowWrite<GroupTotals & { id: string }>(['id', 'count', 'first_seen', 'last_seen', 'name', 'message'], (db, rows) => {
  // Cast, or PostgreSQL takes a parameter in a VALUES list for text.
  const bigint = (value: number) => sql`cast(${value} as bigint)`
  const totals = sql.join(rows.map((row) => sql`(${row.id}, ${bigint(row.count)}, ${bigint(row.first_seen)}, ${bigint(row.last_seen)}, ${row.name}, ${row.message})`))
  const [stored, added] = [(column: string) => sql.ref(`error_groups.${column}`), (column: string) => sql.ref(`totals.${column}`)]
  const storedIsLater = sql`${stored('last_seen')} > ${added('last_seen')}`
  return errorDb(db)
    .with('totals(id, count, first_seen, last_seen, name, message)', () => sql<GroupTotals & { id: string }>`(values ${totals})`)
    .updateTable('error_groups')
    .from('totals')
    .set({
      count: sql`${stored('count')} + ${added('count')}`,
      first_seen: sql`case when ${stored('first_seen')} < ${added('first_seen')} then ${stored('first_seen')} else ${added('first_seen')} end`,
      last_seen: sql`case when ${storedIsLater} then ${stored('last_seen')} else ${added('last_seen')} end`,
      name: sql`case when ${storedIsLater} then ${stored('name')} else ${added('name')} end`,
      message: sql`case when ${storedIsLater} then ${stored('message')} else ${added('message')} end`,
    })
    .whereRef('error_groups.id', '=', 'totals.id')
})

/** A batch's occurrences of one fingerprint on one day with one environment, release and service. */
type CountDelta = ErrorTables['error_count_deltas']

/** What a fold adds to a group's row. */
type GroupTotals = Pick<GroupRow, 'count' | 'first_seen' | 'last_seen' | 'name' | 'message'>

const COUNT_DELTA_COLUMNS = ['project_id', 'group_id', 'fingerprint', 'day', 'environment', 'release', 'service', 'count', 'first_seen', 'last_seen', 'name', 'message', 'tags', 'enriches'] as const
const COUNT_DELTA_INSERT = rowWrite<CountDelta>(COUNT_DELTA_COLUMNS, (db, rows) => errorDb(db).insertInto('error_count_deltas').values(rows))

type DayTotals = ErrorTables['error_fingerprint_days']
type TagTotals = ErrorTables['error_fingerprint_tags']

const DAY_TOTALS_UPSERT = totalsUpsert<DayTotals>('error_fingerprint_days', ['fingerprint', 'day'], ['group_id'])
const TAG_TOTALS_UPSERT = totalsUpsert<TagTotals>('error_fingerprint_tags', ['fingerprint', 'key', 'value'], ['group_id'])

/** Adds a batch's counts to stored totals under `key`, keeping the earliest first and latest last seen. */
function totalsUpsert<R extends Totals & Record<string, unknown>>(table: 'error_fingerprint_days' | 'error_fingerprint_tags', key: (keyof R & string)[], other: (keyof R & string)[]) {
  const stored = (column: string) => sql.ref(`${table}.${column}`)
  const columns = [...key, ...other, 'count', 'first_seen', 'last_seen'] as (keyof R & string)[]
  return rowWrite<R>(columns, (db, rows) =>
    // one statement for either table: its key columns are reached by name
    tablesOf<TablesByName>(db)
      .insertInto(table)
      .values(rows)
      .onConflict((conflict) =>
        conflict.columns(key).doUpdateSet({
          count: sql`${stored('count')} + excluded.count`,
          first_seen: sql`case when excluded.first_seen < ${stored('first_seen')} then excluded.first_seen else ${stored('first_seen')} end`,
          last_seen: sql`case when excluded.last_seen > ${stored('last_seen')} then excluded.last_seen else ${stored('last_seen')} end`,
        }),
      ),
  )
}

type FingerprintInsert = FingerprintRow & { algorithm: string; components: string }

const FINGERPRINT_COLUMNS = ['fingerprint', 'group_id', 'project_id', 'algorithm', 'components'] as const
const FINGERPRINT_INSERT = rowWrite<FingerprintInsert>(FINGERPRINT_COLUMNS, (db, rows) => errorDb(db).insertInto('error_fingerprints').values(rows))

type OccurrenceRow = ReturnType<typeof occurrenceRow>

const OCCURRENCE_COLUMNS = [
  'id', 'project_id', 'group_id', 'fingerprint', 'ts', 'received_at', 'name', 'message', 'stack', 'frames', 'release', 'environment', 'service', 'request', 'metadata', 'trace_id',
  'breadcrumbs', 'span_id', 'reported_by',
] as const
const OCCURRENCE_INSERT = rowWrite<OccurrenceRow>(OCCURRENCE_COLUMNS, (db, rows) => errorDb(db).insertInto('error_occurrences').values(rows))

function occurrenceRow(occurrence: Occurrence, groupId: string) {
  return {
    id: occurrence.id,
    project_id: occurrence.projectId,
    group_id: groupId,
    fingerprint: occurrence.grouping.fingerprint,
    ts: occurrence.ts,
    received_at: occurrence.receivedAt,
    name: occurrence.name,
    message: occurrence.message,
    stack: occurrence.stack,
    frames: occurrence.frames === null ? null : JSON.stringify(occurrence.frames),
    release: occurrence.release,
    environment: occurrence.environment,
    service: occurrence.service,
    request: occurrence.request === null ? null : JSON.stringify(occurrence.request),
    metadata: JSON.stringify(occurrence.metadata),
    trace_id: traceIdOf(occurrence.metadata),
    breadcrumbs: occurrence.breadcrumbs === null ? null : JSON.stringify(occurrence.breadcrumbs),
    span_id: spanIdOf(occurrence.metadata),
    reported_by: reporterOf(occurrence.metadata),
  }
}

/** The span an occurrence happened in (`spanId`), as OTLP and Sentry's intake name it. */
export function spanIdOf(metadata: Record<string, unknown>): string | null {
  const spanId = metadata.spanId
  return typeof spanId === 'string' && spanId !== '' && spanId.length <= 64 ? spanId : null
}

/** Which receiver reported it (`reportedBy`: sentry, opentelemetry); null for captures and ingested events. */
function reporterOf(metadata: Record<string, unknown>): string | null {
  const reporter = metadata.reportedBy
  return reporter === 'sentry' || reporter === 'opentelemetry' ? reporter : null
}

/** An occurrence's other tags as a delta holds them: JSON with sorted keys (one delta per distinct set), or null. */
function tagsJson(tags: Record<string, string>): string | null {
  const keys = Object.keys(tags)
  if (keys.length === 0) return null
  return JSON.stringify(Object.fromEntries(keys.sort().map((key) => [key, tags[key]])))
}

/** The trace an occurrence happened in, as SDKs, OTLP and Sentry's intake name it in its fields (`traceId`). */
export function traceIdOf(metadata: Record<string, unknown>): string | null {
  const traceId = metadata.traceId
  return typeof traceId === 'string' && traceId !== '' && traceId.length <= 128 ? traceId : null
}

/** The user an occurrence counts for, as Sentry's "users affected": `user.id`, else `user.email`, else `user.ip_address`. */
export function occurrenceUser(storage: Pick<Storage, 'jsonPathText'>) {
  const path = (key: string) => storage.jsonPathText('metadata', ['user', key])
  return sql<string | null>`coalesce(${path('id')}, ${path('email')}, ${path('ip_address')})`
}

/**
 * Deletes a group's occurrences past its newest OCCURRENCES_KEPT_PER_GROUP, counting them first per minute and
 * per value of what error signals filter by, in the same transaction: a window's count reads both at once.
 */
export async function trimOccurrences(trx: ErrorDb, storage: Storage, groupId: string) {
  const oldestKept = await trx
    .selectFrom('error_occurrences')
    .select(['ts', 'id'])
    .where('group_id', '=', groupId)
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .offset(OCCURRENCES_KEPT_PER_GROUP - 1)
    .executeTakeFirst()
  if (!oldestKept) return
  const pastKept = sql<boolean>`group_id = ${groupId} and (ts, id) < (${oldestKept.ts}, ${oldestKept.id})`
  const givenUp = trx.selectFrom('error_occurrences').where(pastKept)
  const minute = sql<number>`ts - ts % ${sql.lit(60_000)}`
  const counted = await givenUp
    .select((eb) => [
      'project_id',
      'fingerprint',
      minute.as('minute'),
      'environment',
      'release',
      'service',
      storage.jsonPathText('metadata', ['level']).as('level'),
      occurrenceUser(storage).as('user_key'),
      eb.fn.countAll().as('events'),
    ])
    // by the output names: a JSON path is a parameter, which PostgreSQL would see as a second expression
    .groupBy(['project_id', 'fingerprint', sql.ref('minute'), 'environment', 'release', 'service', sql.ref('level'), sql.ref('user_key')])
    .execute()
  if (counted.length === 0) return
  const now = Date.now()
  const rows = counted.map((row) => ({
    id: newId('trm', now),
    project_id: row.project_id,
    group_id: groupId,
    fingerprint: row.fingerprint,
    ts: Number(row.minute),
    environment: row.environment,
    release: row.release,
    service: row.service,
    level: row.level,
    user_key: row.user_key,
    events: Number(row.events),
  }))
  for (let start = 0; start < rows.length; start += 1000) await trx.insertInto('error_trimmed_minutes').values(rows.slice(start, start + 1000)).execute()
  await trx.deleteFrom('error_occurrences').where(pastKept).execute()
}

export function notificationData(row: GroupRow): Record<string, unknown> {
  return {
    fingerprint: row.fingerprint,
    name: row.name,
    message: row.message,
    status: row.status,
    count: row.count,
    firstSeen: isoTime(row.first_seen),
    lastSeen: isoTime(row.last_seen),
  }
}
