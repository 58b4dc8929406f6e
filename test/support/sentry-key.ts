import assert from 'node:assert/strict'
import type { PortalClient } from './portal.ts'

export interface SentryKey {
  key: string
  dsn: string
  /** the DSN's project number, as the envelope and store paths take it */
  number: string
}

/** A key of `projectId` with the `sentry` scope, as an admin makes one for a Sentry SDK. */
export async function createSentryKey(t: PortalClient, projectId: string): Promise<SentryKey> {
  const created = await t.request('POST', `/api/projects/${projectId}/keys`, { token: t.adminToken, body: { name: 'sentry', scopes: ['sentry'] } })
  assert.equal(created.status, 201, created.text)
  return { key: created.body.key, dsn: created.body.sentryDsn, number: created.body.sentryDsn.split('/').pop() }
}
