import { Type } from 'typebox'
import { named } from '../http/openapi-components.ts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, toPage } from '../http/list.ts'
import { problemResponses } from '../http/problem.ts'
import { newId } from '../ids.ts'
import { recordManagementAction } from '../modules/audit/record.ts'
import { findProject } from '../projects/store.ts'
import { addSecretVersion, disableEndpoint, endpointView, findEndpoint, resumeWaitingDeliveries, type EndpointRow } from './endpoint-store.ts'
import { Endpoint, EndpointKindSchema, EndpointUrl, EventTypes, NewSecret } from './schemas.ts'
import { webhookDb } from './tables.ts'

const Description = Type.String({ maxLength: 500, description: 'for people; not sent' })
const EndpointParams = Type.Object({ id: Type.String({ description: 'the endpoint id (whe_…)' }) })
const tags = ['webhooks']

const EndpointInput = Type.Object(
  {
    projectId: Type.String(),
    url: EndpointUrl,
    kind: Type.Optional(EndpointKindSchema),
    description: Type.Optional(Description),
    eventTypes: Type.Optional(EventTypes),
  },
  { additionalProperties: false },
)

const EndpointChange = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    kind: Type.Optional(EndpointKindSchema),
    description: Type.Optional(Description),
    eventTypes: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries: pending ones wait (no attempt is made) and no new message is queued for it; true starts again, clears the disabled reason and sends the waiting deliveries at once' })),
  },
  { additionalProperties: false, minProperties: 1 },
)

/** Endpoint management: create (secret shown once), list, read, update, delete, rotate. */
export const endpointRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = webhookDb(ctx.storage)
  const view = (row: EndpointRow) => endpointView(row, ctx.storage.parseJson)
  const graceMs = ctx.config.webhooks.rotationGraceSeconds * 1000

  app.post(
    '/endpoints',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'createWebhookEndpoint',
        tags,
        description: 'Messages of the project whose type the endpoint takes are POSTed to it, signed with this secret (see the `webhooks` section). Audited.',
        summary: 'Create an endpoint; its signing secret is in this answer only',
        body: EndpointInput,
        response: { 201: named('CreatedEndpoint', Type.Object({ ...Endpoint.properties, ...NewSecret }, { description: 'The endpoint, with its signing secret shown this once.' })), ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const { projectId, url, kind = 'generic', description = '', eventTypes = [] } = request.body
      await findProject(ctx.storage.db, principal.orgId, projectId)
      const now = Date.now()
      const row: EndpointRow = {
        id: newId('whe', now),
        project_id: projectId,
        url,
        kind,
        description,
        event_types: JSON.stringify(eventTypes),
        enabled: 1,
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      }
      const secret = await db.transaction().execute(async (trx) => {
        await trx.insertInto('webhook_endpoints').values(row).execute()
        const created = await addSecretVersion(trx, ctx.secretBox, row.id, now)
        await recordManagementAction(trx, ctx, projectId, principal, 'webhook.endpoint.created', row.id, { url, kind })
        return created
      })
      return reply.code(201).send({ ...view({ ...row, event_types: eventTypes }), ...secret })
    },
  )

  app.get(
    '/endpoints',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listWebhookEndpoints',
        tags,
        summary: 'A project’s endpoints, newest first (never their secrets)',
        description: 'Deleted endpoints are left out; disabled ones are listed with `disabledReason`.',
        querystring: Type.Object({ project_id: Type.String({ description: 'the project (prj_…)' }), ...PageQuery }, { additionalProperties: false }),
        response: { 200: List(Endpoint), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { project_id: projectId, limit = DEFAULT_LIMIT, cursor } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const query = db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId).where('deleted_at', 'is', null)
      const rows = await pageAfter(query, cursor, limit, 'created_at', 'id').execute()
      return toPage(rows, limit, (row) => [row.created_at, row.id], view)
    },
  )

  app.get(
    '/endpoints/:id',
    {
      config: { access: 'read' },
      schema: { operationId: 'getWebhookEndpoint', tags, summary: 'Read an endpoint (never its secret)', description: '404 for a deleted endpoint or one of another organisation.', params: EndpointParams, response: { 200: Endpoint, ...problemResponses(401, 403, 404, 503) } },
    },
    async (request) => view(await findEndpoint(db, accessPrincipal(request).orgId, request.params.id)),
  )

  app.patch(
    '/endpoints/:id',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'updateWebhookEndpoint',
        tags,
        description: 'Only the fields given change. Audited.',
        summary: 'Change an endpoint’s url, kind, description, event types or enabled state',
        params: EndpointParams,
        body: EndpointChange,
        response: { 200: Endpoint, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const endpoint = await findEndpoint(db, principal.orgId, request.params.id)
      const { url, kind, description, eventTypes, enabled } = request.body
      const now = Date.now()
      await db.transaction().execute(async (trx) => {
        const changes = { url, kind, description, event_types: eventTypes === undefined ? undefined : JSON.stringify(eventTypes), updated_at: now }
        await trx.updateTable('webhook_endpoints').set(changes).where('id', '=', endpoint.id).execute()
        // Paused by a person: pending deliveries wait for it, rather than failing (docs/webhooks.md).
        if (enabled === false) await disableEndpoint(trx, endpoint.id, 'manual', now, 'wait')
        if (enabled === true && endpoint.enabled === 0) {
          await trx
            .updateTable('webhook_endpoints')
            .set({ enabled: 1, disabled_reason: null, disabled_at: null, failing_since: null })
            .where('id', '=', endpoint.id)
            .execute()
          await resumeWaitingDeliveries(trx, endpoint.id, now)
        }
        await recordManagementAction(trx, ctx, endpoint.project_id, principal, 'webhook.endpoint.updated', endpoint.id, { changed: Object.keys(request.body) })
      })
      return view(await findEndpoint(db, principal.orgId, endpoint.id))
    },
  )

  app.delete(
    '/endpoints/:id',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        tags,
        description: 'Audited. The endpoint leaves lists and reads at once.',
        summary: 'Delete an endpoint: its pending deliveries fail; its deliveries and attempts stay readable',
        params: EndpointParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const endpoint = await findEndpoint(db, principal.orgId, request.params.id)
      const now = Date.now()
      await db.transaction().execute(async (trx) => {
        await disableEndpoint(trx, endpoint.id, 'manual', now)
        await trx.updateTable('webhook_endpoints').set({ deleted_at: now, updated_at: now }).where('id', '=', endpoint.id).execute()
        await recordManagementAction(trx, ctx, endpoint.project_id, principal, 'webhook.endpoint.deleted', endpoint.id)
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/endpoints/:id/rotate',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        tags,
        description: 'Receivers can switch to the new secret at leisure during the grace period: each attempt carries a signature by each version. Audited.',
        summary: 'Make a new signing secret, shown in this answer only; the previous one keeps signing alongside for WEBHOOK_ROTATION_GRACE_SECONDS',
        params: EndpointParams,
        response: {
          200: named(
            'RotatedEndpointSecret',
            Type.Object({
              id: Type.String({ description: 'the endpoint' }),
              ...NewSecret,
              previousSecretExpiresAt: Type.String({ format: 'date-time', description: 'until then every attempt carries a signature by each version' }),
            }),
          ),
          ...problemResponses(401, 403, 404, 503),
        },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const endpoint = await findEndpoint(db, principal.orgId, request.params.id)
      const now = Date.now()
      const expiresAt = now + graceMs
      const secret = await db.transaction().execute(async (trx) => {
        await trx.updateTable('webhook_endpoint_secrets').set({ expires_at: expiresAt }).where('endpoint_id', '=', endpoint.id).where('expires_at', 'is', null).execute()
        const created = await addSecretVersion(trx, ctx.secretBox, endpoint.id, now)
        await recordManagementAction(trx, ctx, endpoint.project_id, principal, 'webhook.endpoint.secret_rotated', endpoint.id, { secretId: created.secretId })
        return created
      })
      return { id: endpoint.id, ...secret, previousSecretExpiresAt: new Date(expiresAt).toISOString() }
    },
  )
}
