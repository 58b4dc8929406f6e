import { sql, type RawBuilder } from 'kysely'
import type { AlertSignal, Contributor, SignalQuery } from '../alerts/signal.ts'
import { column, columnIs, countWindowEvents, eventCount, NO_VALUE_SERIES, windowEvents, type EventWindow, type WindowFilter } from '../alerts/event-window.ts'
import type { PortalContext } from '../context.ts'
import type { EventStore } from '../storage/event-store.ts'
import { occurrenceUser } from './group-store.ts'
import { errorDb } from './tables.ts'

// Occurrences are what error signals read: captures and ingested `error` events alike land there, with their group.
// A group keeps its newest OCCURRENCES_KEPT_PER_GROUP and counts the ones it gives up per minute and user in
// error_trimmed_minutes, which `errors.events` and `errors.users` read with them.
const metadataField = (...keys: string[]): WindowFilter => (query, value, store) => query.where(store.jsonPathText('metadata', keys), '=', value)
const groupFingerprint = (table: string) => () => sql`(select g.fingerprint from error_groups g where g.id = ${sql.ref(`${table}.group_id`)})`
const inGroup: WindowFilter = (query, value) => query.where(sql`group_id in (select g.id from error_groups g where g.fingerprint = ${value})` as never)

const OCCURRENCE_WINDOW: EventWindow = {
  table: 'error_occurrences',
  filters: { release: columnIs('release'), environment: columnIs('environment'), service: columnIs('service'), level: metadataField('level'), group: inGroup },
  dimensions: { group: groupFingerprint('error_occurrences'), environment: column('environment'), release: column('release'), service: column('service') },
}

/** The occurrences groups gave up, as counts per minute: the same filters and dimensions. */
const TRIMMED_WINDOW: EventWindow = {
  table: 'error_trimmed_minutes',
  weight: 'events',
  filters: { release: columnIs('release'), environment: columnIs('environment'), service: columnIs('service'), level: columnIs('level'), group: inGroup },
  dimensions: { group: groupFingerprint('error_trimmed_minutes'), environment: column('environment'), release: column('release'), service: column('service') },
}

const FILTERS = {
  release: 'the occurrence’s release',
  environment: 'the occurrence’s environment',
  service: 'the occurrence’s service',
  level: 'the capture’s `level` (Sentry’s, kept in its metadata)',
  group: 'one group, by its fingerprint; without it, all groups',
}

/** Groups opened (or reopened) in the window with an occurrence in it that the filters keep, one series per group. */
async function groupsChanged(ctx: PortalContext, query: SignalQuery, changed: 'created' | 'regressed') {
  const { rows } = windowEvents(ctx, OCCURRENCE_WINDOW, query)
  const occurring = rows.select('group_id').distinct()
  let groups = errorDb(ctx.storage.db).selectFrom('error_groups').select(['fingerprint']).where('project_id', '=', query.projectId).where('id', 'in', occurring as never)
  groups =
    changed === 'created'
      ? groups.where('created_at', '>=', query.fromMs).where('created_at', '<', query.toMs)
      : groups.where('regressed', '=', 1).where('status_changed_at', '>=', query.fromMs).where('status_changed_at', '<', query.toMs)
  const found = await groups.execute()
  if (query.by === undefined) return [{ series: '', value: found.length }]
  return found.map((group) => ({ series: group.fingerprint, value: 1 }))
}

/** Distinct users with an occurrence in the window, kept or given up by its group, counted in one statement. */
async function usersAffected(ctx: PortalContext, query: SignalQuery) {
  const usersOf = (window: EventWindow, user: (store: EventStore) => RawBuilder<string | null>) => {
    const { rows, store } = windowEvents(ctx, window, query)
    const series = query.by === undefined ? sql.lit('') : window.dimensions[query.by](store)
    return rows.select((eb) => [eb.fn.coalesce(eb.cast(series, 'text'), sql.lit(NO_VALUE_SERIES)).as('series'), user(store).as('user_key')])
  }
  const users = usersOf(OCCURRENCE_WINDOW, occurrenceUser).unionAll(usersOf(TRIMMED_WINDOW, () => sql.ref('user_key')) as never)
  const found = await errorDb(ctx.storage.db)
    .selectFrom(users.as('users'))
    .where('user_key', 'is not', null)
    .select((eb) => ['series', sql<number>`count(distinct user_key)`.as('value')] as never)
    .groupBy('series' as never)
    .execute()
  const values = (found as { series: unknown; value: unknown }[]).map((row) => ({ series: String(row.series), value: Number(row.value) }))
  return query.by === undefined && values.length === 0 ? [{ series: '', value: 0 }] : values
}

const TOP_GROUPS = 5

/** The groups with the most occurrences of the window in the series, kept or given up. */
async function topGroups(ctx: PortalContext, query: SignalQuery, series: string): Promise<Contributor[]> {
  const narrowed = query.by === undefined ? query : { ...query, filters: { ...query.filters, [query.by]: series } }
  const perGroup = (window: EventWindow) =>
    windowEvents(ctx, window, narrowed)
      .rows.select((eb) => ['group_id', eventCount(window)(eb).as('occurrences')])
      .groupBy('group_id')
  const db = errorDb(ctx.storage.db)
  const counts = (await db
    .selectFrom(perGroup(OCCURRENCE_WINDOW).unionAll(perGroup(TRIMMED_WINDOW) as never).as('counted'))
    .select((eb) => ['group_id', eb.fn.sum('occurrences').as('occurrences')] as never)
    .groupBy('group_id' as never)
    .orderBy('occurrences' as never, 'desc')
    .limit(TOP_GROUPS)
    .execute()) as { group_id: string; occurrences: unknown }[]
  if (counts.length === 0) return []
  const groups = new Map((await db.selectFrom('error_groups').select(['id', 'fingerprint', 'name', 'message']).where('id', 'in', counts.map((row) => row.group_id)).execute()).map((g) => [g.id, g]))
  return counts.map((row) => {
    const group = groups.get(row.group_id)
    return { label: group ? `${group.name}: ${group.message}`.slice(0, 300) : row.group_id, value: Number(row.occurrences), detail: group?.fingerprint }
  })
}

const base = { filters: FILTERS, uiSection: 'errors', contributors: topGroups }

export const errorSignals: AlertSignal[] = [
  {
    ...base,
    name: 'errors.new_group',
    description: 'Error groups opened in the window (a new issue), one series per group with `by: group`',
    unit: 'groups',
    aggregates: ['count'],
    dimensions: { group: 'the group’s fingerprint' },
    absentIsZero: true,
    triggeredBy: ['error.group.created'],
    evaluate: (ctx, query) => groupsChanged(ctx, query, 'created'),
  },
  {
    ...base,
    name: 'errors.regression',
    description: 'Resolved error groups that an occurrence reopened in the window',
    unit: 'groups',
    aggregates: ['count'],
    dimensions: { group: 'the group’s fingerprint' },
    absentIsZero: true,
    triggeredBy: ['error.group.regressed'],
    evaluate: (ctx, query) => groupsChanged(ctx, query, 'regressed'),
  },
  {
    ...base,
    name: 'errors.events',
    description: 'Error occurrences in the window (“seen more than N times in M”), exact past the 100 a group keeps (those it gave up are counted per minute)',
    unit: 'events',
    aggregates: ['count'],
    dimensions: { group: 'the group’s fingerprint', environment: 'the environment', release: 'the release', service: 'the service' },
    absentIsZero: true,
    evaluate: (ctx, query) => countWindowEvents(ctx, [OCCURRENCE_WINDOW, TRIMMED_WINDOW], query),
  },
  {
    ...base,
    name: 'errors.users',
    description: 'Distinct users with an error occurrence in the window (user.id, else user.email, else user.ip_address), exact past the 100 occurrences a group keeps',
    unit: 'users',
    aggregates: ['count_unique'],
    dimensions: { group: 'the group’s fingerprint', environment: 'the environment', release: 'the release', service: 'the service' },
    absentIsZero: true,
    evaluate: usersAffected,
  },
]
