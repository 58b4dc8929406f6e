import { Type } from 'typebox'
import { columnEquals, defineModule } from '../modules/module.ts'
import { WebhookAttemptPayload, webhookAttemptExamples } from './payload.ts'
import { webhookEventMigrations } from './migrations.ts'
import { startDispatcher } from './dispatcher.ts'
import { webhookRoutes } from './routes.ts'
import { deliveryStatusFields, readDeliveryStatus } from './status.ts'
import { webhookSignals } from './signals.ts'

export const webhooksModule = defineModule({
  type: 'webhook',
  name: 'webhooks',
  basePath: '/api/webhooks',
  payload: WebhookAttemptPayload,
  examples: webhookAttemptExamples,
  table: 'webhook_events',
  columnar: true,
  migrations: webhookEventMigrations,
  columns: (d) => ({ destination: d.destination ?? null, url: d.url, status_code: d.statusCode ?? null }),
  filters: {
    destination: columnEquals('destination', Type.String()),
    status_code: columnEquals('status_code', Type.Integer({ minimum: 100, maximum: 599 })),
  },
  status: { schema: deliveryStatusFields, read: readDeliveryStatus },
  start: startDispatcher,
  // Attempts first, then finished deliveries, then messages none of whose deliveries remain.
  retention: {
    expiring: [
      { table: 'webhook_attempts', timeColumn: 'started_at', key: ['id'] },
      { table: 'webhook_deliveries', timeColumn: 'created_at', key: ['id'], keep: (eb) => eb('status', '=', 'pending') },
      {
        table: 'webhook_messages',
        timeColumn: 'created_at',
        key: ['id'],
        keep: (eb) => eb.exists(eb.selectFrom('webhook_deliveries').select('webhook_deliveries.id').whereRef('webhook_deliveries.message_id', '=', 'webhook_messages.id')),
      },
    ],
  },
  signals: webhookSignals,
  routes: webhookRoutes,
})
