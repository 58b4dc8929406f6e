import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from './problem.ts'

/** The OpenAPI 3.1 document, generated from the route schemas so that it cannot drift from them. */
export const openApiPlugin = fp(async (app) => {
  // What any route can answer, whatever its own schema says: every request can have oversized
  // headers, a path parameter can hold a malformed percent-escape, and every JSON body can be too
  // large, of another type, or not JSON.
  app.addHook('onRoute', (route) => {
    if (!route.schema || route.schema.hide) return
    const response = (route.schema.response ??= {}) as Record<string, unknown>
    const common = [431]
    if (route.schema.body || route.url.includes('/:')) common.push(400)
    if (route.schema.body) common.push(413, 415)
    for (const [status, entry] of Object.entries(problemResponses(...common))) response[status] ??= entry
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Observability Portal',
        version: '0.1.0',
        description:
          'Signed ingest of thirteen event types, module reads, error grouping and webhook delivery. ' +
          'Errors are RFC 9457 problem details with a stable `code`. Lists are `{ data, nextCursor }`, newest first, ' +
          '`limit` (default 50, at most 500) and `cursor`. Unknown query parameters are refused with 400.',
      },
      components: {
        securitySchemes: {
          accessToken: { type: 'http', scheme: 'bearer', description: 'pat_… access token: admin (everything) or viewer (reads only).' },
          apiKey: { type: 'http', scheme: 'bearer', description: 'pk_… project API key: ingest and error capture only.' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN: `GET /metrics` only.' },
        },
      },
      security: [{ accessToken: [] }],
    },
  })
})

/** Serves the document; like every route but health it needs a bearer (spec 4, 5.1): any access token or API key. */
export const openApiRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/openapi.json',
    {
      config: { access: 'any' },
      schema: {
        tags: ['meta'],
        summary: 'This document: OpenAPI 3.1, generated from the running portal’s routes',
        security: [{ accessToken: [] }, { apiKey: [] }],
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'An OpenAPI 3.1.0 document' }), ...problemResponses(401, 503) },
      },
    },
    async () => app.swagger(),
  )
}
