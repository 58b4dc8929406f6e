import { sql, type Kysely } from 'kysely'
import type { WriteContext } from '../../context.ts'
import { rowWrite } from '../../storage/storage.ts'
import { tablesOf, type Connection, type Database } from '../../storage/tables.ts'
import type { StoredEvent } from '../module.ts'
import { SESSION_STATUSES } from './payload.ts'
import type { SessionTables } from './tables.ts'

type SessionDb = Kysely<Database & SessionTables>
type SessionState = SessionTables['session_states']
type SessionAggregate = SessionTables['session_aggregates']

export interface SessionData {
  release: string
  environment?: string
  started: string
  distinctId?: string
  sessionId?: string
  status?: (typeof SESSION_STATUSES)[number]
  errors?: number
  exited?: number
  errored?: number
  abnormal?: number
  crashed?: number
}

/**
 * Folds session events into the release-health summaries, in the ingest transaction: each session's
 * updates into its one row (the worst state and most errors it reported; its first release, environment,
 * start and user), aggregates into their bucket's counts. A batch is folded in memory first, so that one
 * statement never touches a row twice.
 */
export async function recordSessions(connection: Connection, ctx: WriteContext, events: StoredEvent<SessionData>[]): Promise<void> {
  const states = new Map<string, SessionState>()
  const aggregates = new Map<string, SessionAggregate>()
  for (const { projectId, data, receivedAt } of events) {
    const environment = data.environment ?? ''
    const distinctId = data.distinctId ?? ''
    const started = Math.min(Date.parse(data.started), receivedAt)
    if (data.sessionId !== undefined && data.status !== undefined) {
      const update: SessionState = { project_id: projectId, session_id: data.sessionId, release: data.release, environment, distinct_id: distinctId, started, status: data.status, status_rank: SESSION_STATUSES.indexOf(data.status), errors: data.errors ?? 0, updated_at: receivedAt }
      const key = `${projectId}\u0000${data.sessionId}`
      const known = states.get(key)
      states.set(key, known ? worseOf(known, update) : update)
      continue
    }
    const key = [projectId, started, data.release, environment, distinctId].join('\u0000')
    const counts = aggregates.get(key) ?? { project_id: projectId, release: data.release, environment, started, distinct_id: distinctId, exited: 0, errored: 0, abnormal: 0, crashed: 0 }
    counts.exited += data.exited ?? 0
    counts.errored += data.errored ?? 0
    counts.abnormal += data.abnormal ?? 0
    counts.crashed += data.crashed ?? 0
    aggregates.set(key, counts)
  }
  const byKey = <R>(map: Map<string, R>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row)
  await ctx.storage.writeRows(connection, STATE_UPSERT, byKey(states))
  await ctx.storage.writeRows(connection, AGGREGATE_UPSERT, byKey(aggregates))
}

function worseOf(known: SessionState, update: SessionState): SessionState {
  const worse = update.status_rank > known.status_rank ? update : known
  return {
    ...known,
    distinct_id: known.distinct_id || update.distinct_id,
    status: worse.status,
    status_rank: worse.status_rank,
    errors: Math.max(known.errors, update.errors),
    updated_at: Math.max(known.updated_at, update.updated_at),
  }
}

const STATE_COLUMNS = ['project_id', 'session_id', 'release', 'environment', 'distinct_id', 'started', 'status', 'status_rank', 'errors', 'updated_at'] as const
const STATE_UPSERT = rowWrite<SessionState>(STATE_COLUMNS, (db, rows) => {
  const stored = (column: string) => sql.ref(`session_states.${column}`)
  return sessionDb(db)
    .insertInto('session_states')
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(['project_id', 'session_id']).doUpdateSet({
        status: sql`case when excluded.status_rank > ${stored('status_rank')} then excluded.status else ${stored('status')} end`,
        status_rank: sql`case when excluded.status_rank > ${stored('status_rank')} then excluded.status_rank else ${stored('status_rank')} end`,
        errors: sql`case when excluded.errors > ${stored('errors')} then excluded.errors else ${stored('errors')} end`,
        distinct_id: sql`case when ${stored('distinct_id')} = '' then excluded.distinct_id else ${stored('distinct_id')} end`,
        updated_at: sql`case when excluded.updated_at > ${stored('updated_at')} then excluded.updated_at else ${stored('updated_at')} end`,
      }),
    )
})

const AGGREGATE_COLUMNS = ['project_id', 'release', 'environment', 'started', 'distinct_id', 'exited', 'errored', 'abnormal', 'crashed'] as const
const AGGREGATE_UPSERT = rowWrite<SessionAggregate>(AGGREGATE_COLUMNS, (db, rows) => {
  const stored = (column: string) => sql.ref(`session_aggregates.${column}`)
  return sessionDb(db)
    .insertInto('session_aggregates')
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(['project_id', 'started', 'release', 'environment', 'distinct_id']).doUpdateSet({
        exited: sql`${stored('exited')} + excluded.exited`,
        errored: sql`${stored('errored')} + excluded.errored`,
        abnormal: sql`${stored('abnormal')} + excluded.abnormal`,
        crashed: sql`${stored('crashed')} + excluded.crashed`,
      }),
    )
})

function sessionDb(connection: Connection): SessionDb {
  return tablesOf<SessionTables>(connection)
}

export interface HealthWindow {
  projectId: string
  fromMs: number
  toMs: number
  release?: string
  environment?: string
}

/** Sessions and users of one release in one environment over a window, and how many of them crashed. */
export interface ReleaseHealth {
  release: string
  environment: string | null
  sessions: number
  crashedSessions: number
  abnormalSessions: number
  erroredSessions: number
  users: number
  crashedUsers: number
  /** 1 − crashed / sessions; null without sessions */
  crashFreeSessions: number | null
  crashFreeUsers: number | null
  /** this release's share of the environment's sessions (and users) in the window */
  sessionAdoption: number | null
  userAdoption: number | null
}

/**
 * Release health per release and environment over [fromMs, toMs) of sessions' start, as Sentry defines it:
 * a session crashed when its worst state was `crashed`, errored when it saw an error without crashing or
 * ending abnormally; a user crashed when one of their sessions did. Adoption compares with every release of
 * the same environment in the window (so the release filter does not narrow it).
 */
export async function releaseHealth(connection: Connection, window: HealthWindow): Promise<ReleaseHealth[]> {
  const db = sessionDb(connection)
  const { projectId, fromMs, toMs } = window
  const states = await db
    .selectFrom('session_states')
    .select((eb) => [
      'release',
      'environment',
      eb.fn.countAll<number>().as('sessions'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'crashed').then(1).else(0).end()).as('crashed'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'abnormal').then(1).else(0).end()).as('abnormal'),
      eb.fn.sum<number>(eb.case().when(eb.and([eb('status', 'not in', ['crashed', 'abnormal']), eb.or([eb('status', '=', 'errored'), eb('errors', '>', 0)])])).then(1).else(0).end()).as('errored'),
    ])
    .where('project_id', '=', projectId)
    .where('started', '>=', fromMs)
    .where('started', '<', toMs)
    .$if(window.environment !== undefined, (query) => query.where('environment', '=', window.environment!))
    .groupBy(['release', 'environment'])
    .execute()
  const aggregates = await db
    .selectFrom('session_aggregates')
    .select((eb) => ['release', 'environment', eb.fn.sum<number>('exited').as('exited'), eb.fn.sum<number>('errored').as('errored'), eb.fn.sum<number>('abnormal').as('abnormal'), eb.fn.sum<number>('crashed').as('crashed')])
    .where('project_id', '=', projectId)
    .where('started', '>=', fromMs)
    .where('started', '<', toMs)
    .$if(window.environment !== undefined, (query) => query.where('environment', '=', window.environment!))
    .groupBy(['release', 'environment'])
    .execute()
  // Users of both summaries, each once per release and environment, crashed when any of their sessions crashed.
  const userRows = db
    .selectFrom('session_states')
    .select(['release', 'environment', 'distinct_id', sql<number>`case when status = 'crashed' then 1 else 0 end`.as('crashed')])
    .where('project_id', '=', projectId)
    .where('started', '>=', fromMs)
    .where('started', '<', toMs)
    .where('distinct_id', '!=', '')
    .unionAll(
      db
        .selectFrom('session_aggregates')
        .select(['release', 'environment', 'distinct_id', sql<number>`case when crashed > 0 then 1 else 0 end`.as('crashed')])
        .where('project_id', '=', projectId)
        .where('started', '>=', fromMs)
        .where('started', '<', toMs)
        .where('distinct_id', '!=', ''),
    )
  const users = await db
    .selectFrom(userRows.as('users'))
    .select((eb) => [
      'release',
      'environment',
      eb.fn.count<number>('distinct_id').distinct().as('users'),
      eb.fn.count<number>(eb.case().when('crashed', '=', 1).then(eb.ref('distinct_id')).end()).distinct().as('crashed_users'),
    ])
    .$if(window.environment !== undefined, (query) => query.where('environment', '=', window.environment!))
    .groupBy(['release', 'environment'])
    .execute()

  const rows = new Map<string, ReleaseHealth>()
  const rowOf = (release: string, environment: string) => {
    const key = `${release}\u0000${environment}`
    let row = rows.get(key)
    if (!row) {
      row = { release, environment: environment === '' ? null : environment, sessions: 0, crashedSessions: 0, abnormalSessions: 0, erroredSessions: 0, users: 0, crashedUsers: 0, crashFreeSessions: null, crashFreeUsers: null, sessionAdoption: null, userAdoption: null }
      rows.set(key, row)
    }
    return row
  }
  for (const state of states) {
    const row = rowOf(state.release, state.environment)
    row.sessions += Number(state.sessions)
    row.crashedSessions += Number(state.crashed)
    row.abnormalSessions += Number(state.abnormal)
    row.erroredSessions += Number(state.errored)
  }
  for (const aggregate of aggregates) {
    const row = rowOf(aggregate.release, aggregate.environment)
    row.sessions += Number(aggregate.exited) + Number(aggregate.errored) + Number(aggregate.abnormal) + Number(aggregate.crashed)
    row.crashedSessions += Number(aggregate.crashed)
    row.abnormalSessions += Number(aggregate.abnormal)
    row.erroredSessions += Number(aggregate.errored)
  }
  for (const user of users) {
    const row = rowOf(user.release, user.environment)
    row.users = Number(user.users)
    row.crashedUsers = Number(user.crashed_users)
  }
  const all = [...rows.values()]
  const total = (environment: string | null, field: 'sessions' | 'users') => all.filter((row) => row.environment === environment).reduce((sum, row) => sum + row[field], 0)
  for (const row of all) {
    row.crashFreeSessions = rate(row.sessions - row.crashedSessions, row.sessions)
    row.crashFreeUsers = rate(row.users - row.crashedUsers, row.users)
    row.sessionAdoption = rate(row.sessions, total(row.environment, 'sessions'))
    row.userAdoption = rate(row.users, total(row.environment, 'users'))
  }
  return all
    .filter((row) => window.release === undefined || row.release === window.release)
    .sort((a, b) => b.sessions - a.sessions || a.release.localeCompare(b.release) || (a.environment ?? '').localeCompare(b.environment ?? ''))
}

/**
 * The crash-free rates of a project, or of one release and/or environment, over a window: what an alert
 * rule's signal evaluates (`crashFreeSessions` below a threshold). Sessions and users are summed over the
 * releases and environments that match.
 */
function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null
}
