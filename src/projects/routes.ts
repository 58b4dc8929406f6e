import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, toPage } from '../http/list.ts'
import { problemResponses } from '../http/problem.ts'
import { isoTime, newId } from '../ids.ts'
import { recordManagementAction } from '../modules/audit/record.ts'
import { findProject, nextProjectNumber, type ProjectRow } from './store.ts'
import { named } from '../http/openapi-components.ts'

export const Project = named(
  'Project',
  Type.Object(
    {
      id: Type.String({ description: 'prj_…' }),
      orgId: Type.String({ description: 'the organisation it belongs to' }),
      name: Type.String(),
      createdAt: Type.String({ format: 'date-time' }),
      updatedAt: Type.String({ format: 'date-time' }),
    },
    {
      description: 'A project: the unit that API keys, events, error groups and webhook endpoints belong to.',
      examples: [{ id: 'prj_01JD3Z8Q6R2N5M7K9P4TXYZABC', orgId: 'org_default', name: 'checkout', createdAt: '2026-11-23T18:30:00.000Z', updatedAt: '2026-11-23T18:30:00.000Z' }],
    },
  ),
)

const ProjectInput = named(
  'ProjectInput',
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 200, description: 'shown in lists and the UI' }) }, { additionalProperties: false, examples: [{ name: 'checkout' }] }),
)
const ProjectParams = Type.Object({ id: Type.String({ description: 'the project id (prj_…)' }) })

export function projectView(row: ProjectRow) {
  return { id: row.id, orgId: row.org_id, name: row.name, createdAt: isoTime(row.created_at)!, updatedAt: isoTime(row.updated_at)! }
}

export const projectRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = ctx.storage.db
  const tags = ['projects']

  app.get(
    '/api/projects',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listProjects',
        tags,
        summary: 'List the organisation’s projects, newest first',
        description: 'Live projects of the token’s organisation; soft-deleted ones are left out.',
        querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
        response: { 200: List(Project), ...problemResponses(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, cursor } = request.query
      const query = db.selectFrom('projects').selectAll().where('org_id', '=', accessPrincipal(request).orgId).where('deleted_at', 'is', null)
      const rows = await pageAfter(query, cursor, limit, 'created_at', 'id').execute()
      return toPage(rows, limit, (row) => [row.created_at, row.id], projectView)
    },
  )

  app.post(
    '/api/projects',
    {
      config: { access: 'admin' },
      schema: { operationId: 'createProject', tags, summary: 'Create a project', description: 'Records `project.created` in the project’s audit module.', body: ProjectInput, response: { 201: Project, ...problemResponses(400, 401, 403, 415, 503) } },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const now = Date.now()
      const row: ProjectRow = { id: newId('prj', now), org_id: principal.orgId, name: request.body.name, created_at: now, updated_at: now, deleted_at: null, ingest_events_per_second: null, number: null }
      await db.transaction().execute(async (trx) => {
        row.number = await nextProjectNumber(ctx, trx)
        await trx.insertInto('projects').values(row).execute()
        await recordManagementAction(trx, ctx, row.id, principal, 'project.created', row.id, { name: row.name })
      })
      return reply.code(201).send(projectView(row))
    },
  )

  app.get(
    '/api/projects/:id',
    {
      config: { access: 'read' },
      schema: { operationId: 'getProject', tags, summary: 'Read a project', description: '404 for a project of another organisation or a deleted one.', params: ProjectParams, response: { 200: Project, ...problemResponses(401, 403, 404, 503) } },
    },
    async (request) => projectView(await findProject(db, accessPrincipal(request).orgId, request.params.id)),
  )

  app.patch(
    '/api/projects/:id',
    {
      config: { access: 'admin' },
      schema: { operationId: 'updateProject', tags, summary: 'Rename a project', description: 'Records `project.updated` with the old and new name in the project’s audit module.', params: ProjectParams, body: ProjectInput, response: { 200: Project, ...problemResponses(400, 401, 403, 404, 415, 503) } },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const project = await findProject(db, principal.orgId, request.params.id)
      const updated = { ...project, name: request.body.name, updated_at: Date.now() }
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('projects').set({ name: updated.name, updated_at: updated.updated_at }).where('id', '=', project.id).execute()
        await recordManagementAction(trx, ctx, project.id, principal, 'project.updated', project.id, { from: project.name, to: updated.name })
      })
      return projectView(updated)
    },
  )

  app.delete(
    '/api/projects/:id',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'deleteProject',
        tags,
        summary: 'Soft-delete a project: it leaves lists and reads, its keys stop working, its rows stay',
        description: 'Its keys are refused by every portal on the same database once the delete commits (a message on PostgreSQL LISTEN/NOTIFY, and Redis pub/sub with REDIS_URL); within 1 s if that message is lost.',
        params: ProjectParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const project = await findProject(db, principal.orgId, request.params.id)
      await db.transaction().execute(async (trx) => {
        await recordManagementAction(trx, ctx, project.id, principal, 'project.deleted', project.id)
        await trx.updateTable('projects').set({ deleted_at: Date.now() }).where('id', '=', project.id).execute()
        await ctx.apiKeyPrincipals.forget(trx)
      })
      return reply.code(204).send(null)
    },
  )
}
