import { timingSafeEqual } from 'node:crypto'
import fp from 'fastify-plugin'
import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { sha256Hex } from '../identity/secrets.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { readDeliveryStatus } from '../webhooks/status.ts'
import { countResponse, metricsRegistry, webhookOldestPendingAge, webhookQueueDepth } from './metrics.ts'

/**
 * Counts every answer by route and status class, and serves `GET /metrics` (Prometheus text format) to a
 * scraper presenting METRICS_TOKEN as its bearer; a 404 without METRICS_TOKEN (rather than the UI's page).
 */
export const metricsPlugin = fp<{ ctx: PortalContext }>(async (app, { ctx }) => {
  app.addHook('onResponse', async (request, reply) => {
    countResponse(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
  })
  await app.register(metricsRoute, { ctx })
})

const metricsRoute: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const token = ctx.config.metricsToken
  const expected = token === undefined ? undefined : Buffer.from(sha256Hex(token), 'hex')
  app.get(
    '/metrics',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'getMetrics',
        tags: ['health'],
        summary: 'Prometheus metrics of this portal process, in the Prometheus text format',
        description:
          'Served when METRICS_TOKEN is set (404 otherwise), to a bearer equal to it (Prometheus `authorization: { credentials_file }`); other bearers get 401. ' +
          'Counters and histograms are this process’s; `portal_webhook_queue_depth` is read from the shared database. See docs/operations-guide.md.',
        security: [{ metricsToken: [] }],
        response: {
          200: {
            description: 'The Prometheus text exposition format, version 0.0.4.',
            content: { 'text/plain': { schema: Type.String({ description: 'text/plain; version=0.0.4 exposition', examples: ['# HELP portal_ingest_events_total Events committed by ingest.\n# TYPE portal_ingest_events_total counter\nportal_ingest_events_total{type="log"} 3\n'] }) } },
          },
          ...problemResponses(401, 404),
        },
      },
    },
    async (request, reply) => {
      if (expected === undefined) throw new ProblemError(404, 'not_found', 'GET /metrics is served when METRICS_TOKEN is set')
      // The same 401s as every other route (spec part 7): no bearer, or not this one.
      const presented = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
      if (presented === undefined) throw new ProblemError(401, 'missing_token', 'GET /metrics takes `Authorization: Bearer <METRICS_TOKEN>`')
      if (!timingSafeEqual(Buffer.from(sha256Hex(presented), 'hex'), expected)) {
        throw new ProblemError(401, 'invalid_token', 'GET /metrics takes `Authorization: Bearer <METRICS_TOKEN>`')
      }
      const queue = await readDeliveryStatus(ctx, undefined)
      webhookQueueDepth.set(queue.queueDepth)
      webhookOldestPendingAge.set((queue.oldestPendingAgeMs ?? 0) / 1000)
      return reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics())
    },
  )
}
