import type { FastifyPluginAsync } from 'fastify'
import type { PortalContext } from '../context.ts'
import { deliveryRoutes } from './delivery-routes.ts'
import { endpointRoutes } from './endpoint-routes.ts'

/** The webhooks module's own routes under /api/webhooks: endpoint management, deliver, deliveries. */
export const webhookDeliveryRoutes: FastifyPluginAsync<{ ctx: PortalContext }> = async (app, { ctx }) => {
  await app.register(endpointRoutes, { ctx })
  await app.register(deliveryRoutes, { ctx })
}
