import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, toPage } from '../http/list.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { displayPrefix, newCredential, sha256Hex } from '../identity/secrets.ts'
import { isoTime, newId } from '../ids.ts'
import { recordManagementAction } from '../modules/audit/record.ts'
import type { Database } from '../storage/tables.ts'
import { findProject } from './store.ts'

const ApiKey = Type.Object({
  id: Type.String({ description: 'key_…' }),
  projectId: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'the first characters of the key, to tell keys apart' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'to the minute' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})

const CreatedApiKey = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  key: Type.String({ description: 'pk_… — the bearer for ingest; shown in this response only' }),
  webhookSecret: Type.String({ description: 'whsec_… — the HMAC key for X-Service-Signature; shown in this response only' }),
  prefix: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
})

const KeyParams = Type.Object({ id: Type.String(), kid: Type.String() })

function keyView(row: Database['api_keys']) {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: isoTime(row.created_at)!,
    lastUsedAt: isoTime(row.last_used_at),
    revokedAt: isoTime(row.revoked_at),
  }
}

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = ctx.storage.db
  const tags = ['api keys']

  app.get(
    '/api/projects/:id/keys',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List a project’s API keys (never their values or secrets), newest first',
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
        response: { 200: List(ApiKey), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const project = await findProject(db, accessPrincipal(request).orgId, request.params.id)
      const { limit = DEFAULT_LIMIT, cursor } = request.query
      const query = db.selectFrom('api_keys').selectAll().where('project_id', '=', project.id)
      const rows = await pageAfter(query, cursor, limit, 'created_at', 'id').execute()
      return toPage(rows, limit, (row) => [row.created_at, row.id], keyView)
    },
  )

  app.post(
    '/api/projects/:id/keys',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Create an API key and its webhook secret; both values are returned this one time',
        params: Type.Object({ id: Type.String() }),
        body: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { additionalProperties: false })),
        response: { 201: CreatedApiKey, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const project = await findProject(db, principal.orgId, request.params.id)
      const key = newCredential('pk')
      const webhookSecret = newCredential('whsec')
      const now = Date.now()
      const row = {
        id: newId('key', now),
        project_id: project.id,
        name: request.body?.name ?? 'API key',
        key_hash: sha256Hex(key),
        prefix: displayPrefix(key),
        webhook_secret_encrypted: ctx.secretBox.seal(webhookSecret),
        created_at: now,
        last_used_at: null,
        revoked_at: null,
      }
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('api_keys').values(row).execute()
        await recordManagementAction(trx, ctx, project.id, principal, 'api_key.created', row.id, { name: row.name, prefix: row.prefix })
      })
      return reply.code(201).send({ id: row.id, projectId: project.id, name: row.name, key, webhookSecret, prefix: row.prefix, createdAt: isoTime(now)! })
    },
  )

  app.delete(
    '/api/projects/:id/keys/:kid',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Revoke an API key; it is refused (401) from then on. Revoking twice is not an error.',
        description: 'Every portal on the same database refuses it once the revoke commits (a message on PostgreSQL LISTEN/NOTIFY, and Redis pub/sub with REDIS_URL); within 1 s if that message is lost.',
        params: KeyParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const project = await findProject(db, principal.orgId, request.params.id)
      const key = await db.selectFrom('api_keys').selectAll().where('id', '=', request.params.kid).where('project_id', '=', project.id).executeTakeFirst()
      if (!key) throw new ProblemError(404, 'not_found', `API key ${request.params.kid} was not found in project ${project.id}`)
      if (key.revoked_at === null) {
        await db.transaction().execute(async (trx) => {
          await trx.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', key.id).execute()
          await recordManagementAction(trx, ctx, project.id, principal, 'api_key.revoked', key.id, { prefix: key.prefix })
          await ctx.apiKeyPrincipals.forget(trx)
        })
      }
      return reply.code(204).send(null)
    },
  )
}
