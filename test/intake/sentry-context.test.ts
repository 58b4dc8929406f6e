import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { context, propagation, trace } from '@opentelemetry/api'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { registerNodeTracing } from '../support/otel-tracing.ts'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import * as Sentry from '@sentry/node'
import { DIALECTS, createProject, createTestDatabase, readAll, startTestPortal, startTestPortalOn, type PortalClient, type TestPortal } from '../support/portal.ts'
import { createSentryKey } from '../support/sentry-key.ts'

interface Keys {
  projectId: string
  dsn: string
  sentryKey: string
  number: string
  otlpKey: string
}

async function keysFor(t: PortalClient, name: string): Promise<Keys> {
  const project = await createProject(t, name)
  const sentry = await createSentryKey(t, project.id)
  const otlp = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: { name: 'otel', scopes: ['otlp'] } })
  return { projectId: project.id, dsn: sentry.dsn, sentryKey: sentry.key, number: sentry.number, otlpKey: otlp.body.key }
}

const envelope = (...lines: unknown[]) => lines.map((line) => JSON.stringify(line)).join('\n')

function sendEnvelope(t: PortalClient, keys: Keys, ...lines: unknown[]) {
  return t.request('POST', `/api/${keys.number}/envelope/`, { body: envelope(...lines), headers: { 'x-sentry-auth': `Sentry sentry_key=${keys.sentryKey}`, 'content-type': 'application/x-sentry-envelope' } })
}

function failCheckout(cart: number): Error {
  try {
    JSON.parse(`{ cart ${cart}`)
  } catch (error) {
    return error as Error
  }
  throw new Error('unreachable')
}

/** Sentry and an OpenTelemetry tracer in one process, as a service instrumented with both reports. */
function instrumentBoth(t: TestPortal, keys: Keys, release: string) {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${t.url}/api/otlp/v1/traces`, headers: { authorization: `Bearer ${keys.otlpKey}` } }) })],
  })
  registerNodeTracing(provider)
  Sentry.init({ dsn: keys.dsn, defaultIntegrations: false, release, environment: 'production', integrations: [Sentry.openTelemetryIntegration()] })
  return {
    provider,
    async close() {
      await provider.shutdown()
      for (const api of [trace, context, propagation]) api.disable()
    },
  }
}

for (const dialect of DIALECTS) {
  describe(`Sentry context: breadcrumbs, tags, users, one occurrence per failure (${dialect})`, () => {
    let t: TestPortal

    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(async () => {
      await Sentry.close(2000)
      await t.close()
    })

    test('@sentry/node breadcrumbs are kept with the occurrence, the newest 100, oldest first', async () => {
      const keys = await keysFor(t, 'breadcrumbs')
      Sentry.init({ dsn: keys.dsn, defaultIntegrations: false, release: 'crumbs@1', maxBreadcrumbs: 100 })
      for (let step = 0; step < 105; step++) Sentry.addBreadcrumb({ category: 'checkout', message: `step ${step}`, level: 'info', data: { step } })
      Sentry.addBreadcrumb({ type: 'http', category: 'fetch', data: { url: 'https://pay.example/charge', method: 'POST', status_code: 502 } })
      Sentry.captureException(failCheckout(1))
      assert.equal(await Sentry.flush(5000), true)

      const [group] = await readAll(t, `/api/errors/groups?project_id=${keys.projectId}`)
      const [occurrence] = await readAll(t, `/api/errors/groups/${group.fingerprint}/occurrences`)
      assert.equal(occurrence.breadcrumbs.length, 100)
      assert.equal(occurrence.breadcrumbs[0].message, 'step 6', 'the oldest are dropped first')
      const last = occurrence.breadcrumbs[99]
      assert.deepEqual([last.type, last.category, last.data.status_code], ['http', 'fetch', 502])
      assert.ok(Date.parse(last.timestamp) > Date.now() - 60_000, 'Sentry’s seconds become an ISO time')
      assert.equal(occurrence.metadata.breadcrumbs, undefined, 'kept once, not again in metadata')
    })

    test('breadcrumbs sent as a list, as { values }, null or of the wrong type: the event is stored either way', async () => {
      const keys = await keysFor(t, 'breadcrumb shapes')
      const shapes: [unknown, number][] = [
        [[{ timestamp: 1732390000.5, message: 'a list' }], 1],
        [{ values: [{ timestamp: '2024-11-23T19:26:40Z', category: 'ui.click', message: 'values' }, 'not a crumb'] }, 1],
        [null, 0],
        ['wrong', 0],
        [{ values: 5 }, 0],
      ]
      for (const [index, [breadcrumbs]] of shapes.entries()) {
        const answer = await sendEnvelope(t, keys, {}, { type: 'event' }, { exception: { values: [{ type: 'ShapeError', value: `shape ${index}` }] }, breadcrumbs })
        assert.equal(answer.status, 200, answer.text)
      }
      const [group] = await readAll(t, `/api/errors/groups?project_id=${keys.projectId}`)
      assert.equal(group.count, shapes.length)
      const occurrences = await readAll(t, `/api/errors/groups/${group.fingerprint}/occurrences`)
      const byMessage = new Map(occurrences.map((occurrence) => [occurrence.message, occurrence.breadcrumbs.length]))
      shapes.forEach(([, kept], index) => assert.equal(byMessage.get(`shape ${index}`), kept, `shape ${index}`))
    })

    test('tags are facets with counts, and users affected counts distinct users by id, e-mail or IP', async () => {
      const keys = await keysFor(t, 'facets')
      Sentry.init({ dsn: keys.dsn, defaultIntegrations: false, release: 'facets@2', environment: 'production' })
      const users = [{ id: 'u-1' }, { id: 'u-1' }, { id: 'u-2' }, { email: 'ann@example.com' }, { ip_address: '203.0.113.9' }, undefined]
      users.forEach((user, index) =>
        Sentry.withScope((scope) => {
          scope.setTag('browser', index < 4 ? 'Chrome' : 'Firefox')
          scope.setTag('region', 'eu')
          if (user) scope.setUser(user)
          Sentry.captureException(failCheckout(index))
        }),
      )
      assert.equal(await Sentry.flush(5000), true)

      const [group] = await readAll(t, `/api/errors/groups?project_id=${keys.projectId}`)
      assert.equal(group.count, 6)
      assert.equal(group.usersAffected, 4, 'u-1 once, u-2, the e-mail and the IP')
      const detail = await t.request('GET', `/api/errors/groups/${group.fingerprint}`, { token: t.adminToken })
      assert.equal(detail.body.usersAffected, 4)
      const facets = await t.request('GET', `/api/errors/groups/${group.fingerprint}/tags`, { token: t.adminToken })
      assert.equal(facets.status, 200, facets.text)
      const byKey = Object.fromEntries(facets.body.data.map((facet: any) => [facet.key, facet]))
      assert.deepEqual(byKey.browser.topValues.map((value: any) => [value.value, value.count]), [['Chrome', 4], ['Firefox', 2]])
      assert.equal(byKey.browser.distinctValues, 2)
      assert.deepEqual(byKey.release.topValues.map((value: any) => [value.value, value.count]), [['facets@2', 6]])
      assert.deepEqual(byKey.user.topValues.map((value: any) => [value.value, value.count]), [['id:u-1', 2], ['email:ann@example.com', 1], ['id:u-2', 1], ['ip:203.0.113.9', 1]])
      assert.equal(byKey.user.count, 5, 'one capture named no user')
      const one = await t.request('GET', `/api/errors/groups/${group.fingerprint}/tags?values=1`, { token: t.adminToken })
      assert.deepEqual(one.body.data.find((facet: any) => facet.key === 'browser').topValues.map((value: any) => value.value), ['Chrome'])
      assert.deepEqual(detail.body.environments, ['production'], 'the tag keys of the group list stay environment, release and service')
    })

    test('tags from a capture count like Sentry’s, and a merged group counts its users once', async () => {
      const project = await createProject(t, 'capture facets')
      const capture = (name: string, user: string) =>
        t.request('POST', '/api/errors/capture', { token: project.key, body: { name, message: 'boom', tags: { plan: 'pro' }, user: { id: user } } })
      const first = await capture('AlphaError', 'u-1')
      const second = await capture('BetaError', 'u-1')
      await capture('BetaError', 'u-2')
      const merged = await t.request('POST', `/api/errors/groups/${first.body.fingerprint}/merge`, { token: t.adminToken, body: { fingerprints: [second.body.fingerprint] } })
      assert.equal(merged.status, 200, merged.text)
      const [group] = await readAll(t, `/api/errors/groups?project_id=${project.id}`)
      assert.equal(group.usersAffected, 2)
      const facets = await t.request('GET', `/api/errors/groups/${group.fingerprint}/tags`, { token: t.adminToken })
      assert.deepEqual(facets.body.data.find((facet: any) => facet.key === 'plan').topValues.map((value: any) => [value.value, value.count]), [['pro', 3]])
    })

    for (const first of ['opentelemetry', 'sentry'] as const) {
      test(`one exception reported by Sentry and OpenTelemetry for one span is stored once (${first} first), with Sentry’s release and tags and the trace link`, async () => {
        const keys = await keysFor(t, `both reports ${first}`)
        const both = instrumentBoth(t, keys, 'both@3')
        try {
          Sentry.setTag('region', 'eu')
          Sentry.addBreadcrumb({ category: 'cart', message: 'added item' })
          const span = await trace.getTracer('checkout').startActiveSpan('charge card', async (active) => {
            const failure = failCheckout(9)
            active.recordException(failure)
            if (first === 'opentelemetry') {
              active.end()
              await both.provider.forceFlush()
            }
            Sentry.captureException(failure)
            assert.equal(await Sentry.flush(5000), true)
            if (first === 'sentry') {
              active.end()
              await both.provider.forceFlush()
            }
            return active.spanContext()
          })
          const occurrences = await readAll(t, `/api/errors/occurrences?project_id=${keys.projectId}&trace_id=${span.traceId}`)
          assert.equal(occurrences.length, 1, 'stored once')
          const [occurrence] = occurrences
          assert.deepEqual(occurrence.reportedBy, ['opentelemetry', 'sentry'])
          assert.equal(occurrence.spanId, span.spanId)
          assert.equal(occurrence.release, 'both@3', 'the release from Sentry')
          assert.equal(occurrence.metadata.tags.region, 'eu', 'the tags from Sentry')
          assert.equal(occurrence.breadcrumbs.at(-1).message, 'added item')
          assert.ok(occurrence.frames.some((frame: any) => frame.function === 'failCheckout'), 'Sentry’s structured frames')
          const [group] = await readAll(t, `/api/errors/groups?project_id=${keys.projectId}`)
          assert.equal(group.count, 1, 'counted once')
          assert.deepEqual(group.releases, ['both@3'])
          const facets = await t.request('GET', `/api/errors/groups/${group.fingerprint}/tags`, { token: t.adminToken })
          assert.deepEqual(facets.body.data.find((facet: any) => facet.key === 'region').topValues.map((value: any) => value.count), [1])
        } finally {
          await both.close()
        }
      })
    }

    test('the second report of a span’s exception merges into the first after a restart: no duplicate', async () => {
      const database = await createTestDatabase(dialect, { migrated: true })
      const traceId = 'ab'.repeat(16)
      const spanId = 'cd'.repeat(8)
      try {
        const firstPortal = await startTestPortalOn(dialect, database)
        const keys = await keysFor(firstPortal, 'restart')
        const otlp = await firstPortal.request('POST', '/api/otlp/v1/traces', {
          token: keys.otlpKey,
          body: {
            resourceSpans: [{
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
              scopeSpans: [{ spans: [{ traceId, spanId, name: 'charge', startTimeUnixNano: `${Date.now()}000000`, events: [{ name: 'exception', attributes: [{ key: 'exception.type', value: { stringValue: 'CardDeclined' } }, { key: 'exception.message', value: { stringValue: 'card declined' } }] }] }] }],
            }],
          },
        })
        assert.equal(otlp.status, 200, otlp.text)
        await firstPortal.close()

        const secondPortal = await startTestPortalOn(dialect, database)
        try {
          const sentry = await sendEnvelope(secondPortal, keys, {}, { type: 'event' }, {
            release: 'restart@1',
            tags: [['tenant', 'acme']],
            contexts: { trace: { trace_id: traceId, span_id: spanId } },
            exception: { values: [{ type: 'CardDeclined', value: 'card declined', stacktrace: { frames: [{ function: 'charge', filename: 'pay.js', lineno: 3, in_app: true }] } }] },
          })
          assert.equal(sentry.status, 200, sentry.text)
          const occurrences = await readAll(secondPortal, `/api/errors/occurrences?project_id=${keys.projectId}&trace_id=${traceId}`)
          assert.equal(occurrences.length, 1)
          assert.equal(occurrences[0].release, 'restart@1')
          assert.deepEqual(occurrences[0].reportedBy, ['opentelemetry', 'sentry'])
          const [group] = await readAll(secondPortal, `/api/errors/groups?project_id=${keys.projectId}`)
          assert.equal(group.count, 1)
          assert.deepEqual(group.releases, ['restart@1'])
          const facets = await secondPortal.request('GET', `/api/errors/groups/${group.fingerprint}/tags`, { token: secondPortal.adminToken })
          assert.equal(facets.body.data.find((facet: any) => facet.key === 'tenant').topValues[0].value, 'acme', 'tags sent as [key, value] pairs count too')
        } finally {
          await secondPortal.close()
        }
      } finally {
        await database.drop()
      }
    })

    test('two Sentry reports of one span stay two occurrences: only a report from the other receiver merges', async () => {
      const keys = await keysFor(t, 'two sentry reports')
      const event = { contexts: { trace: { trace_id: 'ef'.repeat(16), span_id: '12'.repeat(8) } }, exception: { values: [{ type: 'RetryError', value: 'again' }] } }
      for (let attempt = 0; attempt < 2; attempt++) assert.equal((await sendEnvelope(t, keys, {}, { type: 'event' }, event)).status, 200)
      const [group] = await readAll(t, `/api/errors/groups?project_id=${keys.projectId}`)
      assert.equal(group.count, 2)
    })
  })
}
