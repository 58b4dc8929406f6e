import { ProblemError } from '../http/problem.ts'
import type { SecretBox } from '../context.ts'
import { isoTime, newId } from '../ids.ts'
import { newEndpointSecret } from './signing.ts'
import type { DisabledReason, WebhookDb, WebhookTables } from './tables.ts'
import { tablesOf, type Connection } from '../storage/tables.ts'

export type EndpointRow = WebhookTables['webhook_endpoints']

/** The organisation's live projects, to narrow a webhooks read to what the caller may see. */
export function liveProjectIds(db: WebhookDb, orgId: string) {
  return db.selectFrom('projects').select('id').where('org_id', '=', orgId).where('deleted_at', 'is', null)
}

/** A live endpoint of a live project of the organisation, or a 404 that does not say whether it exists elsewhere. */
export async function findEndpoint(db: WebhookDb, orgId: string, endpointId: string): Promise<EndpointRow> {
  const endpoint = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpointId)
    .where('deleted_at', 'is', null)
    .where('project_id', 'in', liveProjectIds(db, orgId))
    .executeTakeFirst()
  if (!endpoint) throw new ProblemError(404, 'not_found', `endpoint ${endpointId} was not found`)
  return endpoint
}

export function endpointView(row: EndpointRow, parseJson: <T>(value: unknown) => T) {
  return {
    id: row.id,
    projectId: row.project_id,
    url: row.url,
    kind: row.kind,
    description: row.description,
    eventTypes: parseJson<string[]>(row.event_types),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    disabledAt: isoTime(row.disabled_at),
    failingSince: isoTime(row.failing_since),
    createdAt: isoTime(row.created_at)!,
    updatedAt: isoTime(row.updated_at)!,
  }
}

/** Makes the endpoint's new current secret version; the secret is returned in clear this once and stored sealed. */
export async function addSecretVersion(trx: Connection, secretBox: SecretBox, endpointId: string, now: number): Promise<{ secretId: string; secret: string }> {
  const secret = newEndpointSecret()
  const secretId = newId('whs', now)
  await tablesOf<WebhookTables>(trx)
    .insertInto('webhook_endpoint_secrets')
    .values({ id: secretId, endpoint_id: endpointId, secret_encrypted: secretBox.seal(secret), created_at: now, expires_at: null })
    .execute()
  return { secretId, secret }
}

export interface SigningSecret {
  id: string
  secret: string
}

/** The secret versions that sign now, per endpoint, newest first: the current one and any still in grace. */
export async function signingSecrets(db: WebhookDb, secretBox: SecretBox, endpointIds: string[], now: number): Promise<Map<string, SigningSecret[]>> {
  const byEndpoint = new Map<string, SigningSecret[]>()
  if (endpointIds.length === 0) return byEndpoint
  const rows = await db
    .selectFrom('webhook_endpoint_secrets')
    .select(['id', 'endpoint_id', 'secret_encrypted'])
    .where('endpoint_id', 'in', endpointIds)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
  for (const row of rows) {
    const list = byEndpoint.get(row.endpoint_id) ?? []
    list.push({ id: row.id, secret: secretBox.open(row.secret_encrypted) })
    byEndpoint.set(row.endpoint_id, list)
  }
  return byEndpoint
}

/**
 * Stops an enabled endpoint. Its pending deliveries `wait` (a person paused it: they go out once it is enabled
 * again) or `fail` (it is deleted, or its receiver is gone or has failed for days: recover re-sends them).
 * Returns false when it was already disabled, so a cause is announced once.
 */
export async function disableEndpoint(trx: Connection, endpointId: string, reason: DisabledReason, now: number, pending: 'wait' | 'fail' = 'fail'): Promise<boolean> {
  const db = tablesOf<WebhookTables>(trx)
  const result = await db
    .updateTable('webhook_endpoints')
    .set({ enabled: 0, disabled_reason: reason, disabled_at: now, updated_at: now })
    .where('id', '=', endpointId)
    .where('enabled', '=', 1)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) === 0) return false
  if (pending === 'wait') return true
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute()
  return true
}

/** An endpoint enabled again: the deliveries that waited for it are due now, in the order they were made. */
export async function resumeWaitingDeliveries(trx: Connection, endpointId: string, now: number): Promise<void> {
  await tablesOf<WebhookTables>(trx)
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: now, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '>', now)
    .execute()
}
