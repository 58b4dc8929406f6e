import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import * as Sentry from '@sentry/node'
import { DIALECTS, createProject, readAll, startTestPortal, type TestPortal } from '../support/portal.ts'
import { sessionSignals } from '../../src/modules/sessions/signals.ts'
import { createSentryKey } from '../support/sentry-key.ts'

interface Keys {
  projectId: string
  dsn: string
  sentryKey: string
  number: string
}

async function sentryProject(t: TestPortal, name: string): Promise<Keys> {
  const project = await createProject(t, name)
  const sentry = await createSentryKey(t, project.id)
  return { projectId: project.id, dsn: sentry.dsn, sentryKey: sentry.key, number: sentry.number }
}

function sendEnvelope(t: TestPortal, keys: Keys, ...lines: unknown[]) {
  return t.request('POST', `/api/${keys.number}/envelope/`, {
    body: lines.map((line) => JSON.stringify(line)).join('\n'),
    headers: { 'x-sentry-auth': `Sentry sentry_key=${keys.sentryKey}`, 'content-type': 'application/x-sentry-envelope' },
  })
}

async function health(t: TestPortal, projectId: string, query = '') {
  const answer = await t.request('GET', `/api/modules/sessions/releases?project_id=${projectId}${query}`, { token: t.adminToken })
  assert.equal(answer.status, 200, answer.text)
  return answer.body.data as any[]
}

/** One process session of @sentry/node as v11 tracks it (processSessionIntegration, a default integration): started at init, ended at exit. */
async function runProcess(dsn: string, release: string, user: string, outcome: 'clean' | 'handled error' | 'crash') {
  // The user is known before init, so the session processSessionIntegration starts at init names it.
  Sentry.setUser({ id: user })
  Sentry.init({ dsn, release, environment: 'production', defaultIntegrations: false, integrations: [Sentry.processSessionIntegration()] })
  if (outcome === 'handled error') Sentry.captureException(new Error('payment retried'))
  if (outcome === 'crash') Sentry.captureException(new Error('out of memory'), { mechanism: { handled: false, type: 'onuncaughtexception' } })
  Sentry.endSession()
  assert.equal(await Sentry.flush(5000), true)
  Sentry.setUser(null)
}

for (const dialect of DIALECTS) {
  describe(`Release health from Sentry sessions (${dialect})`, () => {
    let t: TestPortal

    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(async () => {
      await Sentry.close(2000)
      await t.close()
    })

    test('@sentry/node process sessions give crash-free sessions and users, and adoption, per release', async () => {
      const keys = await sentryProject(t, 'release health')
      await runProcess(keys.dsn, 'shop@2.0.0', 'u-1', 'clean')
      await runProcess(keys.dsn, 'shop@2.0.0', 'u-2', 'handled error')
      await runProcess(keys.dsn, 'shop@2.0.0', 'u-3', 'crash')
      await runProcess(keys.dsn, 'shop@2.0.0', 'u-1', 'clean')
      await runProcess(keys.dsn, 'shop@1.9.0', 'u-4', 'clean')

      const rows = await health(t, keys.projectId)
      const latest = rows.find((row) => row.release === 'shop@2.0.0')
      assert.ok(latest, JSON.stringify(rows))
      assert.equal(latest.environment, 'production')
      assert.equal(latest.crashedSessions, 1)
      assert.equal(latest.erroredSessions, 1, 'a handled error makes a session errored, not crashed')
      assert.equal(latest.sessions, 4)
      assert.equal(latest.crashFreeSessions, 3 / 4)
      assert.equal(latest.users, 3)
      assert.equal(latest.crashedUsers, 1)
      assert.equal(latest.crashFreeUsers, 2 / 3)
      const older = rows.find((row) => row.release === 'shop@1.9.0')
      assert.equal(older.crashFreeSessions, 1)
      assert.equal(latest.sessionAdoption, 4 / 5)
      assert.equal(latest.userAdoption, 3 / 4)
      assert.deepEqual((await health(t, keys.projectId, '&release=shop@1.9.0')).map((row) => row.release), ['shop@1.9.0'])
      const events = await readAll(t, `/api/modules/sessions/events?project_id=${keys.projectId}&release=shop@2.0.0`)
      assert.ok(events.some((event) => event.data.status === 'crashed'), 'every session update is kept as a `session` event')
    })

    test('a session’s updates count once, in the worst state it reported, whatever order they arrive in', async () => {
      const keys = await sentryProject(t, 'session updates')
      const started = new Date().toISOString()
      const update = (status: string, errors: number, init = false) => ({ sid: 's-1', did: 'u-9', init, started, timestamp: started, status, errors, attrs: { release: 'app@1', environment: 'production' } })
      assert.equal((await sendEnvelope(t, keys, {}, { type: 'session' }, update('crashed', 1))).status, 200)
      assert.equal((await sendEnvelope(t, keys, {}, { type: 'session' }, update('ok', 0, true))).status, 200)
      assert.equal((await sendEnvelope(t, keys, {}, { type: 'session' }, update('exited', 1))).status, 200)
      const [row] = await health(t, keys.projectId)
      assert.deepEqual([row.sessions, row.crashedSessions, row.crashFreeSessions, row.users, row.crashFreeUsers], [1, 1, 0, 1, 0])
    })

    test('request-mode `sessions` aggregates add up per release, and sessions before `from` are left out', async () => {
      const keys = await sentryProject(t, 'aggregates')
      const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString()
      const item = { aggregates: [{ started: minute, exited: 90, errored: 6, crashed: 4 }, { started: minute, did: 'u-1', exited: 1 }], attrs: { release: 'api@7', environment: 'production' } }
      assert.equal((await sendEnvelope(t, keys, {}, { type: 'sessions' }, item)).status, 200)
      assert.equal((await sendEnvelope(t, keys, {}, { type: 'sessions' }, item)).status, 200)
      const [row] = await health(t, keys.projectId)
      assert.deepEqual([row.sessions, row.crashedSessions, row.erroredSessions, row.users], [202, 8, 12, 1])
      assert.equal(row.crashFreeSessions, 1 - 8 / 202)
      // The alert signal over the same sessions: crash-free % per series, and no data (not 100 %) without sessions.
      const [crashFree] = sessionSignals
      const query = { projectId: keys.projectId, fromMs: Date.now() - 3_600_000, toMs: Date.now() + 60_000, filters: { environment: 'production' }, aggregate: 'sessions', by: 'release' }
      assert.deepEqual(await crashFree.evaluate(t.portal.ctx, query), [{ series: 'api@7', value: 100 * (1 - 8 / 202) }])
      assert.deepEqual(await crashFree.evaluate(t.portal.ctx, { ...query, aggregate: 'users', by: undefined }), [{ series: '', value: 100 }])
      assert.deepEqual(await crashFree.evaluate(t.portal.ctx, { ...query, filters: { release: 'api@8' } }), [], 'no sessions: no data')
      const later = new Date(Date.now() + 60_000).toISOString()
      assert.deepEqual(await health(t, keys.projectId, `&from=${later}&to=${new Date(Date.now() + 120_000).toISOString()}`), [])
    })

    test('a session item of the wrong shape is refused naming the field, never dropped', async () => {
      const keys = await sentryProject(t, 'bad sessions')
      const noRelease = await sendEnvelope(t, keys, {}, { type: 'session' }, { sid: 's', status: 'ok', started: new Date().toISOString(), attrs: {} })
      assert.equal(noRelease.status, 400)
      assert.match(noRelease.body.detail, /data\.release: required/)
      const badStatus = await sendEnvelope(t, keys, {}, { type: 'session' }, { sid: 's', status: 'sleeping', started: new Date().toISOString(), attrs: { release: 'a@1' } })
      assert.equal(badStatus.status, 400)
      assert.match(badStatus.body.detail, /data\.status/)
      const emptyAggregate = await sendEnvelope(t, keys, {}, { type: 'sessions' }, { aggregates: [{ started: new Date().toISOString() }], attrs: { release: 'a@1' } })
      assert.equal(emptyAggregate.status, 400)
      assert.deepEqual(await health(t, keys.projectId), [])
    })
  })
}
