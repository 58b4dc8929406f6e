import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, toPage } from '../http/list.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { displayPrefix, newCredential, newWordCredential, sha256Hex } from '../identity/secrets.ts'
import { isoTime, newId } from '../ids.ts'
import { recordManagementAction } from '../modules/audit/record.ts'
import type { Database } from '../storage/tables.ts'
import { DEFAULT_KEY_SCOPES, KeyScope, parseScopes, storedScopes } from './key-scopes.ts'
import { findProject } from './store.ts'
import { named } from '../http/openapi-components.ts'
import { publicBaseUrl } from '../http/public-url.ts'

const ApiKey = named('ApiKey', Type.Object({
  id: Type.String({ description: 'key_…' }),
  projectId: Type.String({ description: 'prj_…' }),
  name: Type.String(),
  prefix: Type.String({ description: 'the first characters of the key, to tell keys apart' }),
  scopes: Type.Array(KeyScope, { description: 'what the key may feed' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'to the minute' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null while the key works' }),
}, { description: 'An API key as listed: never its value or webhook secret.' }))

const CreatedApiKey = named('CreatedApiKey', Type.Object({
  id: Type.String({ description: 'key_…' }),
  projectId: Type.String({ description: 'prj_…' }),
  name: Type.String(),
  key: Type.String({ description: 'pk_… — the bearer for ingest; shown in this response only' }),
  webhookSecret: Type.String({ description: 'whsec_… — the HMAC key for X-Service-Signature; shown in this response only' }),
  prefix: Type.String({ description: 'the first characters of the key, to tell keys apart' }),
  scopes: Type.Array(KeyScope, { description: 'what the key may feed' }),
  sentryDsn: Type.Optional(
    Type.String({ description: 'present when the key has the `sentry` scope: the DSN to give Sentry SDKs (it holds the key; shown in this response only)' }),
  ),
  otlpEndpoint: Type.Optional(
    Type.String({ description: 'present when the key has the `otlp` scope: the value for `OTEL_EXPORTER_OTLP_ENDPOINT` (PUBLIC_URL, else the scheme and host the request came to)' }),
  ),
  createdAt: Type.String({ format: 'date-time' }),
}, {
  description: 'A new API key with its value and webhook secret, which no later response shows again.',
  examples: [{ id: 'key_01JD3Z8Q6R2N5M7K9P4TXYZABC', projectId: 'prj_01JD3Z8Q6R2N5M7K9P4TXYZABC', name: 'checkout backend', key: 'pk_3q8Vd0…', webhookSecret: 'whsec_Zr5t…', prefix: 'pk_3q8Vd0', scopes: ['ingest'], createdAt: '2026-11-23T18:30:00.000Z' }],
}))

const KeyInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'default `API key`' })),
    scopes: Type.Optional(
      Type.Array(KeyScope, {
        minItems: 1,
        uniqueItems: true,
        description:
          'default ["ingest"]. `otlp` and `sentry` protocols cannot sign bodies: a key with those scopes is a bearer credential on its own there. ' +
          'A key with `sentry` is made of word characters only, as Sentry’s DSN grammar requires.',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'checkout backend', scopes: ['ingest'] }] },
)

const ProjectId = Type.String({ description: 'the project id (prj_…)' })
const KeyParams = Type.Object({ id: ProjectId, kid: Type.String({ description: 'the API key id (key_…)' }) })

function keyView(row: Database['api_keys']) {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    prefix: row.prefix,
    scopes: parseScopes(row.scopes),
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
        operationId: 'listApiKeys',
        tags,
        summary: 'List a project’s API keys (never their values or secrets), newest first',
        description: 'Revoked keys are listed too, with `revokedAt` set.',
        params: Type.Object({ id: ProjectId }),
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
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key and its webhook secret; both values are returned this one time',
        description: 'The key (`pk_…`) is the bearer for ingest and capture (and OTLP or Sentry intake, where its scopes allow); the webhook secret signs ingest batches (`X-Service-Signature`). Both are stored only hashed or encrypted.',
        params: Type.Object({ id: ProjectId }),
        body: Type.Optional(KeyInput),
        response: { 201: CreatedApiKey, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const project = await findProject(db, principal.orgId, request.params.id)
      const scopes = request.body?.scopes ?? DEFAULT_KEY_SCOPES
      const forSentry = scopes.includes('sentry')
      const key = forSentry ? newWordCredential('pk') : newCredential('pk')
      const webhookSecret = newCredential('whsec')
      const now = Date.now()
      const row = {
        id: newId('key', now),
        project_id: project.id,
        name: request.body?.name ?? 'API key',
        key_hash: sha256Hex(key),
        prefix: displayPrefix(key),
        webhook_secret_encrypted: ctx.secretBox.seal(webhookSecret),
        scopes: storedScopes(scopes),
        created_at: now,
        last_used_at: null,
        revoked_at: null,
      }
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('api_keys').values(row).execute()
        await recordManagementAction(trx, ctx, project.id, principal, 'api_key.created', row.id, { name: row.name, prefix: row.prefix, scopes })
      })
      const base = publicBaseUrl(ctx.config, request)
      const sentryDsn = forSentry ? sentryDsnOf(base, key, project.number) : undefined
      const otlpEndpoint = scopes.includes('otlp') ? `${base}/api/otlp` : undefined
      return reply
        .code(201)
        .send({ id: row.id, projectId: project.id, name: row.name, key, webhookSecret, prefix: row.prefix, scopes: parseScopes(row.scopes), sentryDsn, otlpEndpoint, createdAt: isoTime(now)! })
    },
  )

  app.delete(
    '/api/projects/:id/keys/:kid',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'revokeApiKey',
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

/** Sentry's DSN: `{scheme}://{public key}@{host}{path}/{project number}`; the SDKs post to `{scheme}://{host}{path}/api/{number}/envelope/`. */
function sentryDsnOf(base: string, key: string, projectNumber: number | null): string {
  const url = new URL(base)
  return `${url.protocol}//${key}@${url.host}${url.pathname.replace(/\/+$/, '')}/${projectNumber}`
}
