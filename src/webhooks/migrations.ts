import type { Migration } from '../storage/migrations.ts'
import { createEventTableV1 } from '../storage/frozen/event-table-v1.ts'

export const webhookEventMigrations: Migration[] = [
  {
    name: 'webhooks/001_webhook_events',
    up: (db, t) =>
      createEventTableV1(db, t, 'webhook_events', [['destination', 'text'], ['url', 'text'], ['status_code', 'integer']], [['destination']]),
  },
]
