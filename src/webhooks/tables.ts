import type { Kysely } from 'kysely'
import type { Storage } from '../storage/storage.ts'
import type { Database } from '../storage/tables.ts'
import type { EventRow } from '../modules/module.ts'

export type EndpointKind = 'generic' | 'slack' | 'discord'
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'
/** how a finished attempt ended */
export type AttemptOutcome = 'succeeded' | 'failed' | 'timeout' | 'network_error' | 'refused'
/** in_progress: recorded before the request left, not finished yet; interrupted: its instance stopped before recording how it ended */
export type AttemptStatus = AttemptOutcome | 'in_progress' | 'interrupted'
/** why an endpoint stopped receiving: a 410 answer, failing for the configured span, or a person */
export type DisabledReason = 'gone' | 'failing' | 'manual'

/** Row types of the webhooks module's tables (migrations webhooks/001 and 002). */
export interface WebhookTables {
  /** attempts reported by other senders (the `webhook` event type) */
  webhook_events: EventRow & { destination: string | null; url: string; status_code: number | null }
  webhook_endpoints: {
    id: string
    project_id: string
    url: string
    kind: EndpointKind
    description: string
    /** JSON array of event types; empty means every type */
    event_types: unknown
    enabled: number
    disabled_reason: DisabledReason | null
    disabled_at: number | null
    /** start of the current run of failed attempts; null after a success */
    failing_since: number | null
    created_at: number
    updated_at: number
    deleted_at: number | null
  }
  webhook_endpoint_secrets: {
    id: string
    endpoint_id: string
    secret_encrypted: string
    created_at: number
    /** null for the current version; set at rotation to the end of the grace period */
    expires_at: number | null
  }
  webhook_messages: { id: string; project_id: string; event_type: string; payload: unknown; created_at: number }
  webhook_deliveries: {
    id: string
    project_id: string
    endpoint_id: string
    message_id: string
    event_type: string
    status: DeliveryStatus
    attempt_count: number
    /** the attempt number after which a failure ends the delivery */
    final_attempt: number
    next_attempt_at: number | null
    /** the dispatcher instance that holds the delivery while its attempt runs */
    lease: string | null
    leased_until: number | null
    created_at: number
    updated_at: number
  }
  webhook_attempts: {
    id: string
    delivery_id: string
    project_id: string
    endpoint_id: string
    number: number
    status: AttemptStatus
    started_at: number
    duration_ms: number
    request: unknown
    response: unknown
    error: string | null
    secret_id: string | null
  }
}

export type WebhookDb = Kysely<Database & WebhookTables>

export function webhookDb(storage: Storage): WebhookDb {
  return storage.db as unknown as WebhookDb
}
