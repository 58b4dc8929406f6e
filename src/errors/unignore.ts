import type { ExpressionBuilder } from 'kysely'
import type { PortalContext } from '../context.ts'
import { notificationData, UNTRIAGED } from './group-store.ts'
import { errorDb, type ErrorTables } from './tables.ts'

/** Groups changed in one pass at most; the job's next pass (a second later) takes the rest. */
const GROUPS_PER_PASS = 1000

/**
 * Returns the ignored groups whose condition is reached (their time has come, or their count or users
 * affected have reached the number set) to unresolved, marked `unignored`, and announces each as error.group.unignored. Reads run it
 * for their project after folding its counts, and every portal's job each second for all projects, so that
 * a time passes without an occurrence arriving or anyone reading. The update checks the condition again,
 * so of several portals that find one group, one changes and announces it.
 */
export async function unignoreDueGroups(ctx: PortalContext, projectId?: string, now = Date.now()): Promise<void> {
  const db = errorDb(ctx.storage.db)
  const due = (eb: ExpressionBuilder<ErrorTables, 'error_groups'>) =>
    eb.and([
      eb('status', '=', 'ignored'),
      eb.or([
        eb('ignored_until', '<=', now),
        eb('ignored_until_count', '<=', eb.ref('count')),
        // users affected, as describeGroups counts them: the group's distinct `user` tag values (an index range)
        eb.and([
          eb('ignored_until_users', 'is not', null),
          eb(
            'ignored_until_users',
            '<=',
            eb.selectFrom('error_fingerprint_tags').select((inner) => inner.fn.count<number>('value').distinct().as('users')).whereRef('error_fingerprint_tags.group_id', '=', 'error_groups.id').where('error_fingerprint_tags.key', '=', 'user'),
          ),
        ]),
      ]),
    ])
  let query = db.selectFrom('error_groups').select('id').where(due).limit(GROUPS_PER_PASS)
  if (projectId !== undefined) query = query.where('project_id', '=', projectId)
  const ids = (await query.execute()).map((row) => row.id)
  if (ids.length === 0) return
  await db.transaction().execute(async (trx) => {
    const rows = await trx.updateTable('error_groups').set({ ...UNTRIAGED, unignored: 1, status_changed_at: now }).where('id', 'in', ids).where(due).returningAll().execute()
    for (const row of rows) await ctx.notifications.publish(trx, row.project_id, 'error.group.unignored', notificationData(row))
  })
}
