import type { Kysely } from 'kysely'
import type { Config } from '../config.ts'
import type { EventModule } from '../modules/module.ts'
import type { Database } from '../storage/tables.ts'

export const DAY_MS = 86_400_000

/** The `event_type` of a project's override that applies to every type. */
const EVERY_TYPE = '*'

/** A project's own retention: `days` for every event type, and `modules` for single types. */
export interface ProjectRetention {
  days: number | null
  modules: Record<string, number>
}

export type RetentionSource = 'project_module' | 'project' | 'install'

/**
 * Days a project keeps a module's rows, and which setting said so: the project's setting for that
 * type, else the project's `days` (unless the module keeps its own default, as audit does), else the
 * install's `RETENTION_DAYS_<TYPE>` / `RETENTION_DAYS`.
 */
export function retentionDays(config: Config, module: EventModule, project: ProjectRetention | undefined): { days: number; source: RetentionSource } {
  const own = project?.modules[module.type]
  if (own !== undefined) return { days: own, source: 'project_module' }
  if (project?.days != null && module.retention?.defaultDays === undefined) return { days: project.days, source: 'project' }
  return { days: config.retention.days[module.type], source: 'install' }
}

/**
 * Rows older than this are expired: the start of the UTC day `days` before `now`. Whole days, so that a
 * day partition on PostgreSQL and a delete on SQLite remove the same rows; a row lives `days` to `days + 1` days.
 */
export function expiryCutoff(days: number, now: number): number {
  return Math.floor((now - days * DAY_MS) / DAY_MS) * DAY_MS
}

export async function readProjectRetentions(db: Kysely<Database>, projectId?: string): Promise<Map<string, ProjectRetention>> {
  let query = db.selectFrom('project_retention').select(['project_id', 'event_type', 'days'])
  if (projectId !== undefined) query = query.where('project_id', '=', projectId)
  const settings = new Map<string, ProjectRetention>()
  for (const row of await query.execute()) {
    let setting = settings.get(row.project_id)
    if (!setting) settings.set(row.project_id, (setting = { days: null, modules: {} }))
    if (row.event_type === EVERY_TYPE) setting.days = row.days
    else setting.modules[row.event_type] = row.days
  }
  return settings
}

/** Replaces a project's settings with `setting`, inside the caller's transaction. */
export async function replaceProjectRetention(trx: Kysely<Database>, projectId: string, setting: ProjectRetention, now: number): Promise<void> {
  await trx.deleteFrom('project_retention').where('project_id', '=', projectId).execute()
  const rows = [
    ...(setting.days === null ? [] : [{ event_type: EVERY_TYPE, days: setting.days }]),
    ...Object.entries(setting.modules).map(([eventType, days]) => ({ event_type: eventType, days })),
  ].map((row) => ({ ...row, project_id: projectId, updated_at: now }))
  if (rows.length > 0) await trx.insertInto('project_retention').values(rows).execute()
}
