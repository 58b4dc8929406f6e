import Fastify from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { PortalContext } from './context.ts'
import { authPlugin } from './http/auth.ts'
import { openApiPlugin, openApiRoute } from './http/openapi.ts'
import { connectionLimits, createPortalServer } from './http/connections.ts'
import { eventLoopDelaySampler, overloaded } from './http/load-shedding.ts'
import { answerClientError, problemErrorHandler, sendProblem } from './http/problem.ts'
import { healthRoutes } from './health/routes.ts'
import { identityRoutes } from './identity/routes.ts'
import { ingestRoutes } from './ingest/route.ts'
import { createIngestPipeline } from './ingest/pipeline.ts'
import { otlpRoutes } from './intake/otlp/routes.ts'
import { sentryRoutes } from './intake/sentry/routes.ts'
import { uiPlugin } from './http/ui.ts'
import { schemaController, validatorCompiler } from './http/validation.ts'
import { MAX_BODY_DEPTH, parseJsonBody, replaceNulInParameters } from './http/json-body.ts'
import { eventReads } from './modules/event-reads.ts'
import { metricsPlugin } from './metrics/routes.ts'
import { modules } from './modules/registry.ts'
import { apiKeyRoutes } from './projects/api-key-routes.ts'
import { projectRoutes } from './projects/routes.ts'
import { projectActivityRoutes } from './projects/activity.ts'
import { backupRoutes } from './backup/routes.ts'
import { retentionRoutes } from './retention/routes.ts'
import { lokiRoutes } from './query-apis/loki/routes.ts'
import { tempoRoutes } from './query-apis/tempo/routes.ts'
import { prometheusRoutes } from './query-apis/prometheus/routes.ts'
import { alertRoutes } from './alerts/routes.ts'
import { changeRoutes } from './changes/routes.ts'

const LOAD_SAMPLE_INTERVAL_MS = 500
/** The largest JSON body any route but ingest (which has INGEST_RATE_LIMIT_MAX_BATCH_BYTES) reads. */
export const BODY_LIMIT_BYTES = 1024 * 1024

/** Builds the portal's HTTP app from its context; listening is the caller's choice (main, tests). */
export async function buildServer(ctx: PortalContext) {
  const handleError = problemErrorHandler(ctx.storage.isUnavailable)
  const app = Fastify({
    loggerInstance: ctx.log,
    bodyLimit: BODY_LIMIT_BYTES,
    clientErrorHandler: answerClientError,
    // The phase timeouts, the connection cap and the pipelining limit (src/http/connections.ts).
    serverFactory: (handler) => createPortalServer(ctx, handler),
    // X-Forwarded-Proto/-Host/-For count only from the proxies TRUST_PROXY names (request.protocol, .host, .ip).
    trustProxy: typeof ctx.config.trustProxy === 'number' ? trustHops(ctx.config.trustProxy) : ctx.config.trustProxy,
    // Flag keys, job and trace ids have no length limit; the 16 KiB request-line limit bounds them instead of Fastify's 100 (a 414).
    routerOptions: { maxParamLength: 16 * 1024 },
    // A malformed percent-escape in the path is refused by the router before any route: a problem body too.
    frameworkErrors: (error, request, reply) => handleError(error, request, reply),
    schemaController,
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  app.removeContentTypeParser('application/json')
  // JSON routes answer 415 to every other media type; text/plain would otherwise reach validation as a string (a 400).
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string, MAX_BODY_DEPTH))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  app.addHook('preValidation', async (request) => {
    replaceNulInParameters(request.params)
    replaceNulInParameters(request.query)
  })

  app.setErrorHandler(handleError)
  app.setNotFoundHandler((request, reply) => sendProblem(reply, 404, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`))

  const { maxEventLoopDelayMs, retryAfterSeconds } = ctx.config.loadShedding
  // Start-up (building the routes and the OpenAPI document, and whatever else runs when ready) blocks the loop
  // for a moment; that is not load. Shedding starts two samples after the portal listens.
  let sheddingFrom = Infinity
  app.addHook('onListen', async () => {
    sheddingFrom = Date.now() + 2 * LOAD_SAMPLE_INTERVAL_MS
  })
  const eventLoop = eventLoopDelaySampler(LOAD_SAMPLE_INTERVAL_MS)
  app.addHook('onClose', async () => eventLoop.stop())
  app.addHook('onRequest', async (request) => {
    // Health stays answerable while the rest sheds load, so that load balancers can tell busy from dead.
    if (maxEventLoopDelayMs === 0 || request.routeOptions.url === '/api/health' || Date.now() < sheddingFrom) return
    const delayMs = eventLoop.delayMs()
    if (delayMs > maxEventLoopDelayMs) throw overloaded(`event loop delay ${Math.round(delayMs)} ms, limit ${maxEventLoopDelayMs} ms`, retryAfterSeconds)
  })
  await app.register(connectionLimits)
  await app.register(openApiPlugin)
  await app.register(metricsPlugin, { ctx })
  await app.register(authPlugin, { ctx })

  await app.register(healthRoutes, { ctx })
  await app.register(openApiRoute)
  await app.register(identityRoutes)
  // One pipeline (limits, validation, group commit) behind every way events arrive.
  const pipeline = await createIngestPipeline(ctx)
  app.addHook('onClose', () => pipeline.close())
  await app.register(ingestRoutes, { ctx, pipeline })
  await app.register(otlpRoutes, { ctx, pipeline })
  await app.register(sentryRoutes, { ctx, pipeline })
  await app.register(projectRoutes, { ctx })
  await app.register(projectActivityRoutes, { ctx })
  await app.register(apiKeyRoutes, { ctx })
  await app.register(retentionRoutes, { ctx })
  await app.register(backupRoutes, { ctx })
  await app.register(alertRoutes, { ctx })
  await app.register(changeRoutes, { ctx })
  for (const module of modules) {
    await app.register(eventReads(module), { ctx, prefix: module.basePath })
    if (module.routes) await app.register(module.routes, { ctx, module, prefix: module.basePath })
  }
  await app.register(lokiRoutes, { ctx })
  await app.register(tempoRoutes, { ctx })
  await app.register(prometheusRoutes, { ctx })
  await app.register(uiPlugin)
  return app
}

/** TRUST_PROXY as a number: the nearest `hops` proxies are believed, as Fastify's own number option (which its types leave out). */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops
}

export type PortalServer = Awaited<ReturnType<typeof buildServer>>
