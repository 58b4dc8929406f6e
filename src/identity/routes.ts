import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accessPrincipal } from '../http/auth.ts'
import { problemResponses } from '../http/problem.ts'
import { named } from '../http/openapi-components.ts'

const Me = named('Identity', Type.Object({
  tokenId: Type.String({ description: 'the access token’s id (`oidc:<subject>` for an OIDC bearer)' }),
  orgId: Type.String({ description: 'the organisation the token acts in' }),
  role: Type.Union([Type.Literal('admin'), Type.Literal('viewer')], { description: 'admin: everything; viewer: reads only' }),
  name: Type.String({ description: 'the token’s name, or the OIDC subject' }),
}, { description: 'Who the bearer of an access token is.' }))

/** Who the bearer is, so that a client (the web UI) can show only what the role may do. */
export const identityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/me',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'getMe',
        tags: ['identity'],
        summary: 'The access token making the request: its id, organisation, role and name',
        description: 'Any access token may read its own identity; an API key gets 403. The web UI signs in with this read.',
        response: { 200: Me, ...problemResponses(401, 403, 503) },
      },
    },
    async (request) => {
      const { tokenId, orgId, role, name } = accessPrincipal(request)
      return { tokenId, orgId, role, name }
    },
  )
}
