import type { FastifyPluginAsync } from 'fastify'
import type { PortalContext } from '../context.ts'
import type { EventModule } from '../modules/module.ts'
import { deliveryRoutes } from './delivery-routes.ts'
import { endpointRoutes } from './endpoint-routes.ts'
import { endpointHealthRoutes } from './endpoint-health.ts'
import { reportedAttemptReads } from './reported-attempts.ts'

/** Every route of the webhooks module under /api/webhooks beyond status and events; one line a plugin. */
export const webhookRoutes: FastifyPluginAsync<{ ctx: PortalContext; module: EventModule }> = async (app, { ctx, module }) => {
  // Not the options object itself: it carries this plugin's prefix, which would apply twice.
  await app.register(endpointRoutes, { ctx })
  await app.register(endpointHealthRoutes, { ctx })
  await app.register(deliveryRoutes, { ctx })
  await app.register(reportedAttemptReads, { ctx, module })
}
