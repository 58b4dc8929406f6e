import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, propagation, trace } from '@opentelemetry/api'
import { TracerProvider } from '@opentelemetry/sdk-trace'
import * as Sentry from '@sentry/node'
import { DIALECTS, createProject, readAll, startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'
import { failCheckoutWithCauses } from '../support/error-chain.ts'
import { registerNodeTracing } from '../support/otel-tracing.ts'
import { createSentryKey as sentryKey, type SentryKey } from '../support/sentry-key.ts'

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

    test('@sentry/node captureException and captureMessage with the DSN arrive as two error groups, the message keeping its level and not logged twice', async () => {
      Sentry.init({ dsn: sentry.dsn, defaultIntegrations: false, release: 'shop@1.4.2', environment: 'staging', serverName: 'web-1' })
      Sentry.setTag('region', 'eu')
      Sentry.setUser({ id: 'u-42' })
      const first = Sentry.captureException(failInCheckout(1))
      Sentry.captureException(failInCheckout(2))
      Sentry.captureMessage('checkout queue is long', 'warning')
      assert.equal(await Sentry.flush(5000), true)

      const all = await readAll(t, `/api/errors/groups?project_id=${project.id}&release=shop@1.4.2`)
      assert.equal(all.length, 2, 'the exception and the message')
      const groups = all.filter((group) => group.name === 'SyntaxError')
      assert.equal(groups.length, 1, 'two occurrences of the same throw share one group')
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

      const [message] = all.filter((group) => group.name === '')
      assert.equal(message.message, 'checkout queue is long')
      const [said] = await readAll(t, `/api/errors/groups/${message.fingerprint}/occurrences`)
      assert.equal(said.metadata.level, 'warning')
      assert.equal(said.release, 'shop@1.4.2')
      const logs = await readAll(t, `/api/modules/logs/events?project_id=${project.id}`)
      assert.equal(logs.length, 0, 'a message is an issue, as in Sentry, not a log line as well')
      assert.ok(!t.logs.join('').includes(sentry.key), 'the key is never logged')
    })

    test('an exception captured inside an active OpenTelemetry span (openTelemetryIntegration) is stored with that trace and span, and found by the trace', async () => {
      const provider = new TracerProvider()
      registerNodeTracing(provider)
      try {
        Sentry.init({ dsn: sentry.dsn, defaultIntegrations: false, release: 'traced@1', integrations: [Sentry.openTelemetryIntegration()] })
        const span = trace.getTracer('checkout').startActiveSpan('charge card', (active) => {
          Sentry.captureException(failInCheckout(8))
          active.end()
          return active.spanContext()
        })
        assert.equal(await Sentry.flush(5000), true)

        const [group] = await readAll(t, `/api/errors/groups?project_id=${project.id}&release=traced@1`)
        const [occurrence] = await readAll(t, `/api/errors/groups/${group.fingerprint}/occurrences`)
        assert.equal(occurrence.traceId, span.traceId)
        assert.equal(occurrence.spanId, span.spanId)
        const ofTrace = await readAll(t, `/api/errors/occurrences?project_id=${project.id}&trace_id=${span.traceId}`)
        assert.deepEqual(ofTrace.map((found) => found.id), [occurrence.id])
      } finally {
        await provider.shutdown()
        for (const api of [trace, context, propagation]) api.disable()
      }
    })

    test('a fingerprint set with scope.setFingerprint groups as Sentry does, {{ default }} standing for the computed one', async () => {
      // A project of its own: the computed group of failInCheckout already holds the earlier tests' occurrences.
      const own = await createProject(t, 'fingerprints')
      const ownKey = await sentryKey(t, own.id)
      Sentry.init({ dsn: ownKey.dsn, defaultIntegrations: false, release: 'fingerprints@1' })
      const capture = (error: Error, fingerprint?: string[]) =>
        Sentry.withScope((scope) => {
          if (fingerprint) scope.setFingerprint(fingerprint)
          Sentry.captureException(error)
        })
      // Two different throws, one fingerprint: one group.
      capture(failInCheckout(1), ['checkout-failed'])
      capture(new RangeError('elsewhere'), ['checkout-failed'])
      // The same throw split by tenant, each beside the computed fingerprint; and once without any.
      capture(failInCheckout(2), ['{{ default }}', 'tenant-a'])
      capture(failInCheckout(3), ['{{ default }}', 'tenant-a'])
      capture(failInCheckout(4), ['{{ default }}', 'tenant-b'])
      capture(failInCheckout(5))
      assert.equal(await Sentry.flush(5000), true)

      const groups = await readAll(t, `/api/errors/groups?project_id=${own.id}&release=fingerprints@1`)
      assert.equal(groups.length, 4, 'checkout-failed, tenant-a, tenant-b and the computed one')
      const byCount = groups.map((group) => group.count).sort()
      assert.deepEqual(byCount, [1, 1, 2, 2])
      const fingerprinted = await Promise.all(groups.map((group) => t.request('GET', `/api/errors/groups/${group.fingerprint}`, { token: t.adminToken })))
      const mentioning = (text: string) => fingerprinted.filter((detail) => JSON.stringify(detail.body).includes(text))
      assert.equal(mentioning('checkout-failed').length, 1, 'the two throws with the same fingerprint share one group')
      assert.equal(mentioning('checkout-failed')[0].body.count, 2)
      assert.equal(mentioning('tenant-a').length, 1)
      assert.equal(mentioning('tenant-a')[0].body.count, 2)
      assert.equal(mentioning('tenant-b').length, 1)
      assert.equal(mentioning('tenant-b')[0].body.count, 1)
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

    test('a Python event keeps its chained traceback and source lines as printed stack text; its frames still group it', async () => {
      const frame = (fn: string, line: number, source: string) => ({ function: fn, filename: 'orders.py', abs_path: '/srv/app/orders.py', lineno: line, context_line: `    ${source}`, in_app: true })
      const event = {
        event_id: 'b'.repeat(32),
        platform: 'python',
        exception: {
          values: [
            { type: 'KeyError', value: "'sku-1'", stacktrace: { frames: [frame('load', 12, 'return cache[key]')] } },
            { type: 'LookupError', value: 'no item sku-1', stacktrace: { frames: [frame('checkout', 20, 'item = load(key)'), frame('load', 14, 'raise LookupError(key)')] } },
          ],
        },
      }
      const answer = await t.request('POST', `/api/${sentry.number}/store/?sentry_key=${sentry.key}&sentry_version=7`, { body: event })
      assert.equal(answer.status, 200, answer.text)
      const [group] = await readAll(t, `/api/errors/groups?project_id=${project.id}&q=no item sku-1`)
      const [occurrence] = await readAll(t, `/api/errors/groups/${group.fingerprint}/occurrences`)
      assert.equal(
        occurrence.stack,
        [
          'Traceback (most recent call last):',
          '  File "/srv/app/orders.py", line 12, in load',
          '    return cache[key]',
          "KeyError: 'sku-1'",
          '',
          'During handling of the above exception, another exception occurred:',
          '',
          'Traceback (most recent call last):',
          '  File "/srv/app/orders.py", line 20, in checkout',
          '    item = load(key)',
          '  File "/srv/app/orders.py", line 14, in load',
          '    raise LookupError(key)',
          'LookupError: no item sku-1',
        ].join('\n'),
      )
      assert.deepEqual(occurrence.frames.map((f: any) => f.function), ['load', 'checkout'], 'the thrown exception’s frames, innermost first')
    })

    test('@sentry/node with linkedErrorsIntegration sends an Error’s causes: the occurrence keeps each with its frames, oldest first, and prints the chain', async () => {
      const own = await createProject(t, 'causes')
      const ownKey = await sentryKey(t, own.id)
      // linkedErrorsIntegration is one of the SDK's default integrations, named here because the others would hook this process.
      Sentry.init({ dsn: ownKey.dsn, defaultIntegrations: false, integrations: [Sentry.linkedErrorsIntegration()], release: 'causes@1' })
      Sentry.captureException(failCheckoutWithCauses())
      assert.equal(await Sentry.flush(5000), true)

      const [group] = await readAll(t, `/api/errors/groups?project_id=${own.id}`)
      const [occurrence] = await readAll(t, `/api/errors/groups/${group.fingerprint}/occurrences`)
      assert.equal(occurrence.message, 'checkout failed')
      assert.equal(occurrence.frames[0].function, 'failCheckoutWithCauses')
      assert.deepEqual(
        occurrence.metadata.chained.map((exception: any) => [exception.type, exception.value, exception.frames[0].function]),
        [
          ['TypeError', 'card is undefined', 'readCard'],
          ['Error', 'payment declined', 'chargeCard'],
        ],
        'the causes, oldest first, each with its frames innermost first',
      )
      const headings = occurrence.stack.split('\n').filter((line: string) => !line.startsWith('    at '))
      assert.deepEqual(headings, ['Error: checkout failed', 'Caused by: Error: payment declined', 'Caused by: TypeError: card is undefined'])
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

/**
 * A reverse proxy on loopback that serves the portal under `/portal` (the prefix stripped), as nginx's
 * `location /portal/ { proxy_pass http://portal/; }` does, with the X-Forwarded headers it would add.
 */
async function prefixProxyOn(target: string, port: number): Promise<{ close(): void }> {
  const upstream = new URL(target)
  const proxy = http.createServer((request, response) => {
    const path = (request.url ?? '/').replace(/^\/portal/, '') || '/'
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path, headers: { ...request.headers, host: upstream.host, 'x-forwarded-host': request.headers.host, 'x-forwarded-proto': 'http' } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      },
    )
    forwarded.on('error', () => response.writeHead(502).end())
    request.pipe(forwarded)
  })
  await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve))
  return { close: () => proxy.close() }
}

const keyBody = { name: 'behind a proxy', scopes: ['sentry', 'otlp'] }

for (const dialect of DIALECTS) {
  describe(`the DSN and OTLP endpoint behind a reverse proxy (${dialect})`, () => {
    test('without PUBLIC_URL or TRUST_PROXY, X-Forwarded headers are ignored: the DSN names the host the request came to', async () => {
      const t = await startTestPortal(dialect)
      try {
        const project = await createProject(t)
        const created = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: keyBody, headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' } })
        const host = new URL(t.url).host
        assert.match(created.body.sentryDsn, new RegExp(`^http://pk_\\w+@${host}/\\d+$`))
        assert.equal(created.body.otlpEndpoint, `http://${host}/api/otlp`)
      } finally {
        await t.close()
      }
    })

    test('with TRUST_PROXY naming the proxy, its X-Forwarded-Proto and -Host make the DSN and endpoint', async () => {
      const t = await startTestPortal(dialect, { TRUST_PROXY: '127.0.0.1' })
      try {
        const project = await createProject(t)
        const created = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: keyBody, headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'observe.example.com' } })
        assert.match(created.body.sentryDsn, /^https:\/\/pk_\w+@observe\.example\.com\/\d+$/)
        assert.equal(created.body.otlpEndpoint, 'https://observe.example.com/api/otlp')
      } finally {
        await t.close()
      }
    })

    test('with PUBLIC_URL under a path prefix, @sentry/node given the DSN reports through the proxy', async () => {
      // The proxy's address is known only once it listens, and the portal's only once it starts: PUBLIC_URL names a port reserved first.
      const reserved = http.createServer()
      await new Promise<void>((resolve) => reserved.listen(0, '127.0.0.1', resolve))
      const proxyPort = (reserved.address() as AddressInfo).port
      await new Promise<void>((resolve) => reserved.close(() => resolve()))
      const t = await startTestPortal(dialect, { PUBLIC_URL: `http://127.0.0.1:${proxyPort}/portal/` })
      const proxy = await prefixProxyOn(t.url, proxyPort)
      try {
        const project = await createProject(t)
        const created = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: keyBody })
        assert.match(created.body.sentryDsn, new RegExp(`^http://pk_\\w+@127\\.0\\.0\\.1:${proxyPort}/portal/\\d+$`))
        assert.equal(created.body.otlpEndpoint, `http://127.0.0.1:${proxyPort}/portal/api/otlp`)
        Sentry.init({ dsn: created.body.sentryDsn, defaultIntegrations: false, release: 'proxied@1' })
        Sentry.captureException(failInCheckout(7))
        assert.equal(await Sentry.flush(5000), true)
        const groups = await readAll(t, `/api/errors/groups?project_id=${project.id}&release=proxied@1`)
        assert.equal(groups.length, 1, 'the exception came through the proxy')
      } finally {
        await Sentry.close(2000)
        proxy.close()
        await t.close()
      }
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
