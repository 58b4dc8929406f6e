import { newId } from '../ids.ts'
import type { Notifications } from '../notifications.ts'
import type { DeliveryStatus, WebhookTables } from './tables.ts'
import { tablesOf, type Connection } from '../storage/tables.ts'

export interface EnqueuedDelivery {
  id: string
  endpointId: string
  status: DeliveryStatus
}

interface TargetEndpoint {
  id: string
  event_types: unknown
}

/** True when the endpoint takes `eventType`: it lists it, or lists nothing (every type). */
function subscribes(endpoint: TargetEndpoint, eventType: string, parseJson: (value: unknown) => string[]): boolean {
  const types = parseJson(endpoint.event_types)
  return types.length === 0 || types.includes(eventType)
}

/**
 * Stores a message and one pending delivery per endpoint inside `trx`, so the deliveries exist
 * exactly when whatever caused them is committed. The dispatcher picks them up from the table.
 */
export async function enqueueMessage(
  trx: Connection,
  message: { projectId: string; eventType: string; payload: Record<string, unknown>; endpointIds: string[]; attempts: number },
): Promise<{ messageId: string; deliveries: EnqueuedDelivery[] }> {
  const now = Date.now()
  const db = tablesOf<WebhookTables>(trx)
  const messageId = newId('msg', now)
  await db.insertInto('webhook_messages').values({ id: messageId, project_id: message.projectId, event_type: message.eventType, payload: JSON.stringify(message.payload), created_at: now }).execute()
  const rows = message.endpointIds.map((endpointId) => ({
    id: newId('dlv', now),
    project_id: message.projectId,
    endpoint_id: endpointId,
    message_id: messageId,
    event_type: message.eventType,
    status: 'pending' as const,
    attempt_count: 0,
    final_attempt: message.attempts,
    next_attempt_at: now,
    lease: null,
    leased_until: null,
    created_at: now,
    updated_at: now,
  }))
  if (rows.length > 0) await db.insertInto('webhook_deliveries').values(rows).execute()
  return { messageId, deliveries: rows.map((row) => ({ id: row.id, endpointId: row.endpoint_id, status: row.status })) }
}

/** The enabled, live endpoints of a project that take `eventType`. */
export async function subscribedEndpointIds(trx: Connection, projectId: string, eventType: string, parseJson: (value: unknown) => string[]): Promise<string[]> {
  const endpoints = await tablesOf<WebhookTables>(trx)
    .selectFrom('webhook_endpoints')
    .select(['id', 'event_types'])
    .where('project_id', '=', projectId)
    .where('enabled', '=', 1)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute()
  return endpoints.filter((endpoint) => subscribes(endpoint, eventType, parseJson)).map((endpoint) => endpoint.id)
}

/** The portal's own announcements, delivered to the project's endpoints that subscribe to them. */
export function webhookNotifications(options: { attempts: number; parseJson: (value: unknown) => string[] }): Notifications {
  return {
    async publish(trx, projectId, type, data) {
      const endpointIds = await subscribedEndpointIds(trx, projectId, type, options.parseJson)
      if (endpointIds.length === 0) return
      await enqueueMessage(trx, { projectId, eventType: type, payload: data, endpointIds, attempts: options.attempts })
    },
  }
}
