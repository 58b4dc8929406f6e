import { Type } from 'typebox'
import type { TObject, TString } from 'typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { named } from '../http/openapi-components.ts'
import { problemResponses } from '../http/problem.ts'
import { recordManagementAction } from '../modules/audit/record.ts'
import type { ReadsApp } from '../modules/read-route.ts'
import type { Migration } from '../storage/migrations.ts'
import { findFoldedGroup } from './group-reads.ts'
import { errorDb } from './tables.ts'

/** Who a group is assigned to; kept beside the group rows, which merges and captures rewrite. */
export const assigneeMigrations: Migration[] = [
  {
    name: 'errors/100_group_assignees',
    up: (db, t) =>
      db.schema
        .createTable('error_group_assignees')
        .ifNotExists()
        .addColumn('group_id', 'text', (c) => c.primaryKey())
        .addColumn('assignee', 'text', (c) => c.notNull())
        .addColumn('assigned_by', 'text', (c) => c.notNull())
        .addColumn('assigned_at', t.bigint, (c) => c.notNull())
        .execute(),
  },
]

const Assignment = named('ErrorGroupAssignment', Type.Object({
  assignee: Type.Union([Type.String(), Type.Null()], { description: 'a person: an access token’s name or an OIDC subject; null when nobody is assigned' }),
  assignedBy: Type.Union([Type.String(), Type.Null()], { description: 'the name of who assigned it' }),
  assignedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  people: Type.Array(Type.String(), { description: 'people of the organisation to choose from: the names of its live access tokens and the assignees so far' }),
}))

/** `GET` and `PUT /api/errors/groups/{fingerprint}/assignee`: read by any access token, set by an admin, audited. */
export function assigneeRoutes(app: ReadsApp, ctx: PortalContext, FingerprintParams: TObject<{ fingerprint: TString }>) {
  const db = errorDb(ctx.storage.db)

  async function view(groupId: string, orgId: string) {
    const row = await db.selectFrom('error_group_assignees').selectAll().where('group_id', '=', groupId).executeTakeFirst()
    const tokens = await db.selectFrom('access_tokens').select('name').where('org_id', '=', orgId).where('revoked_at', 'is', null).execute()
    const people = [...new Set([...tokens.map((token) => token.name), ...(row ? [row.assignee] : [])])].sort()
    return { assignee: row?.assignee ?? null, assignedBy: row?.assigned_by ?? null, assignedAt: row ? new Date(Number(row.assigned_at)).toISOString() : null, people }
  }

  app.get(
    '/groups/:fingerprint/assignee',
    {
      config: { access: 'read' },
      schema: {
        tags: ['errors'],
        operationId: 'getErrorGroupAssignee',
        summary: 'Who a group is assigned to, and the people it can be assigned to',
        description: 'Any fingerprint the group holds finds it.',
        params: FingerprintParams,
        response: { 200: Assignment, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const group = await findFoldedGroup(ctx, principal.orgId, request.params.fingerprint)
      return view(group.id, principal.orgId)
    },
  )

  app.put(
    '/groups/:fingerprint/assignee',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['errors'],
        operationId: 'assignErrorGroup',
        summary: 'Assign a group to a person (an access token’s name or an OIDC subject), or to nobody',
        description: 'Written to the project’s audit module as `error.group.assigned`.',
        params: FingerprintParams,
        body: Type.Object({ assignee: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], { description: 'null unassigns' }) }, { additionalProperties: false }),
        response: { 200: Assignment, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const group = await findFoldedGroup(ctx, principal.orgId, request.params.fingerprint)
      const { assignee } = request.body
      const by = principal.kind === 'accessToken' ? principal.name : 'portal'
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('error_group_assignees').where('group_id', '=', group.id).execute()
        if (assignee !== null) await trx.insertInto('error_group_assignees').values({ group_id: group.id, assignee, assigned_by: by, assigned_at: Date.now() }).execute()
        await recordManagementAction(trx, ctx, group.project_id, principal, 'error.group.assigned', group.fingerprint, { assignee })
      })
      return view(group.id, principal.orgId)
    },
  )
}
