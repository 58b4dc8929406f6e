import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import * as Sentry from '@sentry/node'
import { DIALECTS, createProject, readAll, startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'

interface SentryKey {
  key: string
  dsn: string
  number: string
}

async function sentryKey(t: TestPortal, projectId: string): Promise<SentryKey> {
  const created = await t.request('POST', `/api/projects/${projectId}/keys`, { token: t.adminToken, body: { name: 'sentry', scopes: ['sentry'] } })
  assert.equal(created.status, 201, created.text)
  const number = created.body.sentryDsn.split('/').pop()
  return { key: created.body.key, dsn: created.body.sentryDsn, number }
}

function failInCheckout(orderId: number): Error {
  try {
    JSON.parse(`{ order ${orderId}`)
  } catch (error) {
    return error as Error
  }
  throw new Error('unreachable')
}

const envelope = (...lines: unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')

for (const dialect of DIALECTS) {
  describe(`Sentry receiver (${dialect})`, () => {
    let t: TestPortal
    let project: TestProject
    let sentry: SentryKey

    before(async () => {
      t = await startTestPortal(dialect)
      project = await createProject(t, 'sentry project')
      sentry = await sentryKey(t, project.id)
    })
    after(async () => {
      await Sentry.close(2000)
      await t.close()
    })

    test('a key with the sentry scope gets a DSN in Sentry’s grammar; lists show scopes; the default is ingest only', async () => {
      assert.match(sentry.dsn, /^http:\/\/pk_[0-9a-f]{64}@127\.0\.0\.1:\d+\/\d+$/)
      const keys = await readAll(t, `/api/projects/${project.id}/keys`)
      assert.deepEqual(keys.map((key) => key.scopes).sort(), [['ingest'], ['sentry']])
      const plain = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: { name: 'plain' } })
      assert.deepEqual(plain.body.scopes, ['ingest'])
      assert.equal(plain.body.sentryDsn, undefined)
      const unknown = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: { scopes: ['everything'] } })
      assert.equal(unknown.status, 400)
      const other = await createProject(t, 'second')
      const otherKey = await sentryKey(t, other.id)
      assert.notEqual(otherKey.number, sentry.number, 'every project has its own number')
    })

    test('@sentry/node captureException and captureMessage with the DSN arrive as an error group and a log', async () => {
      Sentry.init({ dsn: sentry.dsn, defaultIntegrations: false, release: 'shop@1.4.2', environment: 'staging', serverName: 'web-1' })
      Sentry.setTag('region', 'eu')
      Sentry.setUser({ id: 'u-42' })
      const first = Sentry.captureException(failInCheckout(1))
      Sentry.captureException(failInCheckout(2))
      Sentry.captureMessage('checkout queue is long', 'warning')
      assert.equal(await Sentry.flush(5000), true)

      const groups = await readAll(t, `/api/errors/groups?project_id=${project.id}&release=shop@1.4.2`)
      assert.equal(groups.length, 1, 'two occurrences of the same throw share one group')
      assert.equal(groups[0].name, 'SyntaxError')
      assert.equal(groups[0].count, 2)
      assert.deepEqual(groups[0].environments, ['staging'])
      const detail = await t.request('GET', `/api/errors/groups/${groups[0].fingerprint}`, { token: t.adminToken })
      assert.equal(detail.status, 200)
      assert.ok(
        JSON.stringify(detail.body).includes('failInCheckout'),
        'grouping names the in-app frame the exception was thrown in',
      )
      const occurrences = await readAll(t, `/api/errors/groups/${groups[0].fingerprint}/occurrences`)
      const mine = occurrences.find((occurrence) => occurrence.metadata.eventId === first)
      assert.ok(mine, 'the occurrence keeps the Sentry event id')
      assert.equal(mine.metadata.serverName, 'web-1')
      assert.equal(mine.metadata.tags.region, 'eu')
      assert.equal(mine.metadata.user.id, 'u-42')

      const logs = await readAll(t, `/api/modules/logs/events?project_id=${project.id}&level=warn`)
      assert.equal(logs.length, 1)
      assert.equal(logs[0].data.message, 'checkout queue is long')
      assert.equal(logs[0].data.fields.release, 'shop@1.4.2')
      assert.ok(!t.logs.join('').includes(sentry.key), 'the key is never logged')
    })

    test('the store endpoint and ?sentry_key= take one JSON event; request headers are filtered', async () => {
      const event = {
        event_id: 'a'.repeat(32),
        timestamp: Date.now() / 1000,
        platform: 'node',
        exception: { values: [{ type: 'StoreError', value: 'from store', stacktrace: { frames: [{ function: 'main', filename: '/srv/app/main.js', lineno: 3, in_app: true }] } }] },
        request: { url: 'https://shop.example/cart', headers: { Authorization: 'Bearer secret-token', 'User-Agent': 'curl' } },
      }
      const answer = await t.request('POST', `/api/${sentry.number}/store/?sentry_key=${sentry.key}&sentry_version=7`, { body: event })
      assert.equal(answer.status, 200, answer.text)
      assert.deepEqual(answer.body, { id: 'a'.repeat(32) })
      const [group] = await readAll(t, `/api/errors/groups?project_id=${project.id}&q=from store`)
      const [occurrence] = await readAll(t, `/api/errors/groups/${group.fingerprint}/occurrences`)
      assert.equal(occurrence.request.headers.Authorization, '[filtered]')
      assert.equal(occurrence.request.headers['User-Agent'], 'curl')
      assert.ok(!t.logs.join('').includes(sentry.key), 'a key in the query string is redacted from the request log')
    })

    test('an envelope’s transaction becomes trace spans and unknown item types are skipped', async () => {
      const traceId = 'b'.repeat(32)
      const start = Date.now() / 1000 - 1
      const body = envelope(
        { event_id: 'c'.repeat(32) },
        { type: 'client_report' },
        { discarded_events: [] },
        { type: 'made_up_item', length: 3 },
        'x\ny',
        { type: 'transaction' },
        {
          type: 'transaction',
          transaction: 'GET /cart',
          start_timestamp: start,
          timestamp: start + 0.25,
          contexts: { trace: { trace_id: traceId, span_id: '1'.repeat(16), op: 'http.server' } },
          spans: [{ span_id: '2'.repeat(16), parent_span_id: '1'.repeat(16), trace_id: traceId, description: 'SELECT cart', start_timestamp: start, timestamp: start + 0.1 }],
        },
      )
      const answer = await t.request('POST', `/api/${sentry.number}/envelope/`, { body, headers: { 'content-type': 'application/x-sentry-envelope', 'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${sentry.key}` } })
      assert.equal(answer.status, 200, answer.text)
      const read = await t.request('GET', `/api/traces/${traceId}?project_id=${project.id}`, { token: t.adminToken })
      assert.equal(read.body.spanCount, 2)
      assert.equal(read.body.rootSpan.name, 'GET /cart')
      assert.equal(read.body.rootSpan.durationMs, 250)
    })

    test('browser SDKs’ text/plain envelopes are taken like application/x-sentry-envelope ones', async () => {
      for (const contentType of ['text/plain;charset=UTF-8', 'application/x-sentry-envelope']) {
        const eventId = (contentType.startsWith('text') ? 'd' : 'e').repeat(32)
        const body = envelope({ event_id: eventId }, { type: 'event' }, { event_id: eventId, level: 'info', message: `sent as ${contentType}` })
        const answer = await t.request('POST', `/api/${sentry.number}/envelope/?sentry_key=${sentry.key}&sentry_version=7`, { body, headers: { 'content-type': contentType } })
        assert.equal(answer.status, 200, `${contentType}: ${answer.text}`)
        assert.deepEqual(answer.body, { id: eventId })
      }
    })

    test('bad input gets a clear 4xx: a broken item header, an unknown project number, a key without the scope', async () => {
      const auth = { 'x-sentry-auth': `Sentry sentry_key=${sentry.key}` }
      const broken = await t.request('POST', `/api/${sentry.number}/envelope/`, { body: envelope({}, '{"type": "event", "length": ', '{}'), headers: auth })
      assert.equal(broken.status, 400)
      assert.equal(broken.body.code, 'invalid_envelope')
      assert.match(broken.body.detail, /envelope item 0 header/)
      const tooLong = await t.request('POST', `/api/${sentry.number}/envelope/`, { body: envelope({}, { type: 'event', length: 9999 }, '{}'), headers: auth })
      assert.equal(tooLong.status, 400)
      const unknownNumber = await t.request('POST', '/api/999999/envelope/', { body: envelope({}), headers: auth })
      assert.equal(unknownNumber.status, 404)
      assert.equal(unknownNumber.body.code, 'not_found')
      const noKey = await t.request('POST', `/api/${sentry.number}/envelope/`, { body: envelope({}) })
      assert.equal(noKey.status, 401)
      const ingestOnly = await t.request('POST', `/api/${sentry.number}/envelope/`, { body: envelope({}), headers: { 'x-sentry-auth': `Sentry sentry_key=${project.key}` } })
      assert.equal(ingestOnly.status, 403)
      assert.equal(ingestOnly.body.code, 'scope_required')
      const notJson = await t.request('POST', `/api/${sentry.number}/store/`, { body: 'not json', headers: { ...auth, 'content-type': 'application/json' } })
      assert.equal(notJson.status, 400)
    })
  })
}

describe('Sentry receiver limits', () => {
  test('past the project’s limit the answer is 429 with Retry-After and X-Sentry-Rate-Limits', async () => {
    const t = await startTestPortal(DIALECTS[0], { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1' })
    try {
      const project = await createProject(t)
      const { key, number } = await sentryKey(t, project.id)
      const send = () =>
        t.request('POST', `/api/${number}/store/`, { body: { message: 'hello', level: 'info' }, headers: { 'x-sentry-auth': `Sentry sentry_key=${key}` } })
      assert.equal((await send()).status, 200)
      const refused = await send()
      assert.equal(refused.status, 429)
      assert.ok(Number(refused.headers.get('retry-after')) >= 1)
      assert.match(refused.headers.get('x-sentry-rate-limits') ?? '', /^\d+::key$/)
    } finally {
      await t.close()
    }
  })
})
