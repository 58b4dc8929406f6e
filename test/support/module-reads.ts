import assert from 'node:assert/strict'
import { createAccessToken, createOrganization } from '../../src/identity/store.ts'
import { createProject, ingest, startTestPortal, type Dialect, type TestPortal, type TestProject } from './portal.ts'

/** A second organisation with its own admin token and project: its data must never show in the first's reads. */
export async function otherOrganisation(t: TestPortal): Promise<{ token: string; project: TestProject }> {
  const org = await createOrganization(t.portal.ctx.storage.db, 'other org')
  const { token } = await createAccessToken(t.portal.ctx.storage.db, { orgId: org.id, role: 'admin', name: 'other admin' })
  return { token, project: await createProject(t, 'other org project', token) }
}

/** Ingests events that must all be accepted. */
export async function ingestAll(t: TestPortal, project: TestProject, events: unknown[]): Promise<void> {
  const res = await ingest(t, project, events)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.rejected, [])
}

/** A GET with the default admin token (or `token`), asserting the status. */
export async function read(t: TestPortal, path: string, status = 200, token = t.viewerToken): Promise<any> {
  const res = await t.request('GET', path, { token })
  assert.equal(res.status, status, `${path}: ${res.text}`)
  return res.body
}

/** An ISO time `minutes` after a fixed instant, so that tests control event order. */
export function at(minutes: number, base = Date.parse('2026-03-15T12:00:00.000Z')): string {
  return new Date(base + minutes * 60_000).toISOString()
}

/** A test portal for reads; ingest limits are off because seeding many events would trip them. */
export function startReadsPortal(dialect: Dialect): Promise<TestPortal> {
  return startTestPortal(dialect, { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000' })
}
