import assert from 'node:assert/strict'
import type { TestPortal } from '../support/portal.ts'
import { eventually } from './receiver.ts'

/** Environment of a webhooks test portal: fast retries, a short timeout, loopback receivers allowed. */
export const FAST_WEBHOOKS = {
  WEBHOOK_RETRY_SCHEDULE: '0.1,0.1',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
}

export async function createEndpoint(t: TestPortal, projectId: string, url: string, extra: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/api/webhooks/endpoints', { token: t.adminToken, body: { projectId, url, ...extra } })
  assert.equal(res.status, 201, res.text)
  return res.body as { id: string; secret: string; secretId: string; [field: string]: any }
}

export async function deliver(t: TestPortal, projectId: string, eventType: string, payload: Record<string, unknown>, endpointIds?: string[]) {
  const res = await t.request('POST', '/api/webhooks/deliver', { token: t.adminToken, body: { projectId, eventType, payload, endpointIds } })
  assert.equal(res.status, 202, res.text)
  return res.body as { messageId: string; deliveries: { id: string; endpointId: string; status: string }[] }
}

export async function readDelivery(t: TestPortal, deliveryId: string) {
  const res = await t.request('GET', `/api/webhooks/deliveries/${deliveryId}`, { token: t.viewerToken })
  assert.equal(res.status, 200, res.text)
  return res.body
}

/** The delivery once it has ended (succeeded or failed). */
export async function endedDelivery(t: TestPortal, deliveryId: string, timeoutMs = 10_000) {
  return eventually(
    async () => {
      const delivery = await readDelivery(t, deliveryId)
      return delivery.status === 'pending' ? undefined : delivery
    },
    timeoutMs,
    `delivery ${deliveryId} to end`,
  )
}
