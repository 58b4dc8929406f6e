import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { eventTypes, modules } from '../modules/registry.ts'
import { outgoingWebhooks } from '../webhooks/openapi-webhooks.ts'
import type { Access } from './auth.ts'
import { hoistNamedSchemas, hoistProblemResponses, pascalCase, type JsonNode } from './openapi-components.ts'
import { documentRoute } from './openapi-route.ts'
import { PROBLEM_CODES, problemResponses, problemTitle } from './problem.ts'

/** Every tag an operation may carry, with what it groups; a route's tag must be one of these (test/openapi.test.ts). */
export const API_TAGS: { name: string; description: string }[] = [
  { name: 'health', description: 'Whether the portal can serve: for load balancers and probes; no bearer needed.' },
  { name: 'meta', description: 'This document and other facts about the API itself.' },
  { name: 'identity', description: 'Who the bearer of an access token is.' },
  { name: 'ingest', description: 'Sending events: the signed batch of spec 4.1, taken with a project API key.' },
  { name: 'projects', description: 'Projects of the organisation: create, rename, soft-delete.' },
  { name: 'api keys', description: 'A project’s API keys (`pk_…`) and the webhook secret each signs ingest batches with.' },
  { name: 'operations', description: 'Running the install: backups of the embedded database.' },
  { name: 'loki', description: 'Grafana Loki’s query API over the logs module, for Grafana’s Loki data source and logcli (docs/grafana.md).' },
  { name: 'tempo', description: 'Grafana Tempo’s query API over the traces module, under /tempo, for Grafana’s Tempo data source (docs/grafana.md).' },
  { name: 'prometheus', description: 'Prometheus’ query API over the performance module and OTLP metrics, under /prometheus, for Grafana’s Prometheus data source and promtool (docs/grafana.md).' },
  { name: 'alerts', description: 'Alert rules on every module’s signals, their states and history, silences, backtests and rules as code; notifications go out as `alert.*` webhooks.' },
  { name: 'changes', description: 'What changed in a window (deploys, configuration, flags): every module that declares change markers.' },
  ...modules.map((module) => ({
    name: module.name,
    description: `The ${module.name} module: events of type \`${module.type}\` (payload \`${pascalCase(module.type)}Payload\`), read under \`${module.basePath}\`.`,
  })),
]

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
          `Signed ingest of ${eventTypes.length} event types (${eventTypes.join(', ')}), module reads, error grouping and webhook delivery.\n\n` +
          'Errors are RFC 9457 problem details (`Problem`) with a stable `code`; each response lists the codes it can carry. ' +
          'Lists are `{ data, nextCursor }`, newest first, `limit` (default 50, at most 500) and `cursor`. Unknown query parameters are refused with 400. ' +
          'Operations that need an admin access token say so and carry `x-required-role: admin`; reads carry `x-required-role: viewer`. ' +
          'A JSON route answers 415 to any other media type.',
        contact: { name: 'Observability Portal maintainers' },
        // No licence is chosen yet (the repository has no LICENSE file); replace this when one is.
        license: { name: 'Proprietary: no licence granted yet', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'The portal serving this document' }],
      tags: API_TAGS,
      components: {
        securitySchemes: {
          accessToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'pat_… access token, or an OIDC JWT when AUTH_JWKS_URL is set',
            description: 'A person’s or an automation’s access token: role admin (everything) or viewer (reads only). Management and all reads.',
          },
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'pk_… project API key',
            description: 'A project API key: write-only, bound to one project, where its scopes allow: signed ingest and error capture (`ingest`), OTLP (`otlp`), Sentry (`sentry`); 403 everywhere else.',
          },
          metricsToken: { type: 'http', scheme: 'bearer', bearerFormat: 'METRICS_TOKEN', description: 'The METRICS_TOKEN of this install: `GET /metrics` only.' },
        },
      },
      security: [{ accessToken: [] }],
    },
    transform: ({ schema, url, route }) => ({ schema: documentRoute(schema as JsonNode, (route.config as { access?: Access } | undefined)?.access) as typeof schema, url }),
    transformObject: (documentObject) => {
      const document = (documentObject as { openapiObject: JsonNode }).openapiObject
      document.webhooks = outgoingWebhooks()
      hoistNamedSchemas(document)
      hoistProblemResponses(document, (status, codes) => {
        const common = new Set(Object.keys(PROBLEM_CODES).filter((code) => PROBLEM_CODES[code].status === status && PROBLEM_CODES[code].arises === 'every'))
        return pascalCase(problemTitle(status)) + codes.filter((code) => !common.has(code)).map(pascalCase).join('')
      })
      return document as never
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
        operationId: 'getOpenApiDocument',
        tags: ['meta'],
        summary: 'This document: OpenAPI 3.1, generated from the running portal’s routes',
        description: 'Generated from the route schemas of the running portal, so it cannot drift from them. Any access token or API key may read it.',
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'An OpenAPI 3.1.0 document', examples: [{ openapi: '3.1.0' }] }), ...problemResponses(401, 503) },
      },
    },
    async () => app.swagger(),
  )
}
