import type { Kysely } from 'kysely'
import type { PortalContext } from '../context.ts'
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

/** The number a new project gets (Sentry's DSN names projects by number): one past the highest, under a lock so that concurrent creations never share one. */
export async function nextProjectNumber(ctx: PortalContext, trx: Kysely<Database>): Promise<number> {
  await ctx.storage.lockInTransaction(trx, 'project-numbers')
  const { highest } = await trx.selectFrom('projects').select((eb) => eb.fn.max('number').as('highest')).executeTakeFirstOrThrow()
  return Number(highest ?? 0) + 1
}
