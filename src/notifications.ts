import type { Connection } from './storage/tables.ts'

/** Events the portal itself announces to webhook endpoints subscribed to them (DESIGN: Webhooks). */
export type NotificationType = 'error.group.created' | 'error.group.regressed' | 'error.group.unignored' | 'deploy.failed' | 'endpoint.disabled'

/**
 * How a module announces something inside the transaction that caused it, so that the announcement
 * is durable exactly when the cause is. The webhooks module provides it (src/webhooks/enqueue.ts).
 */
export interface Notifications {
  publish(trx: Connection, projectId: string, type: NotificationType, data: Record<string, unknown>): Promise<void>
}
