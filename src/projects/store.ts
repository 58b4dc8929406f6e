import type { Kysely } from 'kysely'
import type { Database } from '../storage/tables.ts'
import { ProblemError } from '../http/problem.ts'

export type ProjectRow = Database['projects']

/** A live project of the organisation, or a 404 that does not tell whether it exists elsewhere. */
export async function findProject(db: Kysely<Database>, orgId: string, projectId: string): Promise<ProjectRow> {
  const project = await db
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', projectId)
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
  if (!project) throw new ProblemError(404, 'not_found', `project ${projectId} was not found`)
  return project
}
