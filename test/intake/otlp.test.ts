import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api'
import { SeverityNumber } from '@opentelemetry/api-logs'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace'
import { LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter } from '@opentelemetry/sdk-logs'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto'
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http'
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { DIALECTS, createProject, ingest, event, readAll, startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'

type Encoding = 'proto' | 'json'

/**
 * The stock exporters configured the way a user configures them: OTEL_EXPORTER_OTLP_ENDPOINT and
 * OTEL_EXPORTER_OTLP_HEADERS, which each exporter reads when it is made.
 */
function withOtelEnvironment<T>(base: string, key: string, make: () => T): T {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${base}/api/otlp`
  process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer ${key}`
  try {
    return make()
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
    delete process.env.OTEL_EXPORTER_OTLP_HEADERS
  }
}

async function otlpKey(t: TestPortal, projectId: string, scopes: string[] = ['otlp']): Promise<string> {
  const created = await t.request('POST', `/api/projects/${projectId}/keys`, { token: t.adminToken, body: { name: 'otel', scopes } })
  assert.equal(created.status, 201, created.text)
  return created.body.key
}

for (const dialect of DIALECTS) {
  describe(`OTLP/HTTP receiver (${dialect})`, () => {
    let t: TestPortal
    let project: TestProject
    let key: string

    before(async () => {
      t = await startTestPortal(dialect)
      project = await createProject(t, 'otel project')
      key = await otlpKey(t, project.id)
    })
    after(() => t.close())

    for (const encoding of ['proto', 'json'] as Encoding[]) {
      test(`spans from the ${encoding} trace exporter become a trace, and a recorded exception an error group linked to it`, async () => {
        const exporter: SpanExporter = withOtelEnvironment(t.url, key, () => (encoding === 'proto' ? new ProtoTraceExporter() : new JsonTraceExporter()))
        const provider = new TracerProvider({
          resource: resourceFromAttributes({ 'service.name': `checkout-${encoding}`, 'deployment.environment.name': `staging-${encoding}` }),
          spanProcessors: [new SimpleSpanProcessor({ exporter })],
        })
        const tracer = provider.getTracer('checkout-tests')
        const root = tracer.startSpan('POST /orders', { attributes: { 'http.route': '/orders' } })
        const child = tracer.startSpan('charge card', {}, trace.setSpan(ROOT_CONTEXT, root))
        const failure = new TypeError(`card ${encoding} declined`)
        child.recordException(failure)
        child.setStatus({ code: SpanStatusCode.ERROR, message: 'declined' })
        child.end()
        root.end()
        await provider.forceFlush()
        await provider.shutdown()

        const { traceId, spanId: rootSpanId } = root.spanContext()
        const read = await t.request('GET', `/api/traces/${traceId}?project_id=${project.id}`, { token: t.adminToken })
        assert.equal(read.status, 200, read.text)
        assert.equal(read.body.spanCount, 2)
        // the resource's attributes are kept on each span, and traces are searched by them and by a span's own
        const listed = await t.request('GET', `/api/traces?project_id=${project.id}&attribute=deployment.environment.name=staging-${encoding}`, { token: t.adminToken })
        assert.deepEqual(listed.body.data.map((found: any) => [found.traceId, found.route]), [[traceId, '/orders']])
        assert.deepEqual(read.body.services, [`checkout-${encoding}`])
        assert.equal(read.body.rootSpan.spanId, rootSpanId)
        const childSpan = read.body.spans.find((span: any) => span.spanId === child.spanContext().spanId)
        assert.equal(childSpan.parentSpanId, rootSpanId)
        assert.equal(childSpan.name, 'charge card')
        assert.equal(childSpan.data.status.code, 'error')
        assert.equal(childSpan.data.kind, 'internal')
        assert.equal(read.body.spans.find((span: any) => span.spanId === rootSpanId).data.attributes['http.route'], '/orders')

        const groups = await readAll(t, `/api/errors/groups?project_id=${project.id}&service=checkout-${encoding}`)
        assert.equal(groups.length, 1)
        assert.equal(groups[0].name, 'TypeError')
        const occurrences = await readAll(t, `/api/errors/groups/${groups[0].fingerprint}/occurrences`)
        assert.equal(occurrences[0].metadata.traceId, traceId)
        assert.equal(occurrences[0].metadata.spanId, child.spanContext().spanId)
        // the frames of the code that threw (this file, or its bundle under npm test)
        assert.match(occurrences[0].stack, /otlp\.test\.(ts|mjs)/)
      })

      test(`log records from the ${encoding} log exporter become logs with level, fields and the trace they belong to`, async () => {
        const exporter: LogRecordExporter = withOtelEnvironment(t.url, key, () => (encoding === 'proto' ? new ProtoLogExporter() : new JsonLogExporter()))
        const provider = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'billing' }), processors: [new SimpleLogRecordProcessor({ exporter })] })
        const span = new TracerProvider().getTracer('t').startSpan('work')
        provider.getLogger('billing.payments').emit({
          severityNumber: SeverityNumber.WARN,
          severityText: 'WARN',
          body: `payment slow (${encoding})`,
          attributes: { orderId: `o-${encoding}`, attempt: 2 },
          context: trace.setSpan(ROOT_CONTEXT, span),
        })
        await provider.forceFlush()
        await provider.shutdown()

        const logs = await readAll(t, `/api/modules/logs/events?project_id=${project.id}&field.orderId=o-${encoding}`)
        assert.equal(logs.length, 1)
        const [log] = logs
        assert.equal(log.data.level, 'warn')
        assert.equal(log.data.message, `payment slow (${encoding})`)
        assert.equal(log.data.module, 'billing.payments')
        assert.equal(log.data.fields.attempt, 2)
        assert.equal(log.data.fields['service.name'], 'billing')
        assert.equal(log.data.traceId, span.spanContext().traceId)
        assert.equal(log.data.spanId, span.spanContext().spanId)
        // filed under the logger's name, found by the service that sent it
        const byService = await readAll(t, `/api/modules/logs/events?project_id=${project.id}&service=billing&q=${encoding})`)
        assert.deepEqual(byService.map((found: any) => found.id), [log.id])
        assert.deepEqual(await readAll(t, `/api/modules/logs/events?project_id=${project.id}&service=billing.payments`), [])
      })

      test(`gauges, sums and histograms from the ${encoding} metric exporter answer the performance summary`, async () => {
        const exporter: PushMetricExporter = withOtelEnvironment(t.url, key, () => (encoding === 'proto' ? new ProtoMetricExporter() : new JsonMetricExporter()))
        const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
        const service = `api-${encoding}`
        const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': service }), readers: [reader] })
        const meter = provider.getMeter('api')
        const duration = meter.createHistogram('http.server.duration', { unit: 'ms' })
        for (const value of [10, 20, 30, 100]) duration.record(value, { route: '/orders' })
        meter.createCounter('orders.created').add(3)
        meter.createGauge('queue.depth').record(7)
        await provider.forceFlush()
        await provider.shutdown()

        const summary = await t.request('GET', `/api/modules/performance/summary?project_id=${project.id}&service=${service}`, { token: t.adminToken })
        assert.equal(summary.status, 200, summary.text)
        const byMetric = Object.fromEntries(summary.body.data.map((row: any) => [row.metric, row]))
        assert.equal(byMetric['http.server.duration'].avg, 40, 'a histogram point is its mean: (10+20+30+100)/4')
        assert.equal(byMetric['http.server.duration'].unit, 'ms')
        assert.equal(byMetric['orders.created'].max, 3)
        assert.equal(byMetric['queue.depth'].max, 7)
        const points = await readAll(t, `/api/modules/performance/events?project_id=${project.id}&metric=http.server.duration&service=${service}`)
        assert.equal(points[0].data.kind, 'histogram')
        assert.equal(points[0].data.count, 4)
        assert.equal(points[0].data.min, 10)
        assert.equal(points[0].data.max, 100)
        assert.equal(points[0].data.bucketCounts.reduce((a: number, b: number) => a + b, 0), 4)
      })
    }

    test('one bad span is refused in partialSuccess and the others are stored', async () => {
      const span = (spanId: string, traceId = 'aa'.repeat(16)) => ({ traceId, spanId, name: 'op', startTimeUnixNano: '1700000000000000000', endTimeUnixNano: '1700000000005000000' })
      const body = { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [span('0102030405060708'), span('1112131415161718', ''), span('2122232425262728')] }] }] }
      const answer = await t.request('POST', '/api/otlp/v1/traces', { token: key, body })
      assert.equal(answer.status, 200, answer.text)
      assert.equal(answer.body.partialSuccess.rejectedSpans, 1)
      assert.match(answer.body.partialSuccess.errorMessage, /span 1: data\.traceId: required/)
      const read = await t.request('GET', `/api/traces/${'aa'.repeat(16)}?project_id=${project.id}`, { token: t.adminToken })
      assert.equal(read.body.spanCount, 2)
      assert.equal(read.body.spans[0].durationMs, 5)
    })

    test('a gzipped body is taken', async () => {
      const json = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'zipped hello' }, severityNumber: 9 }] }] }] }
      const raw = await fetch(`${t.url}/api/otlp/v1/logs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify(json)),
      })
      assert.equal(raw.status, 200)
      assert.deepEqual(await raw.json(), {})
      const logs = await readAll(t, `/api/modules/logs/events?project_id=${project.id}&q=zipped`)
      assert.equal(logs[0].data.level, 'info')
    })

    const post = (path: string, body: Buffer | string, headers: Record<string, string>, token = key) =>
      fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body: body as BodyInit })

    test('a truncated protobuf body is a 400 naming the message', async () => {
      const exporterBody = Buffer.from([0x0a, 0x20, 0x0a, 0x1e, 0x12])
      const answer = await post('/api/otlp/v1/traces', exporterBody, { 'content-type': 'application/x-protobuf' })
      assert.equal(answer.status, 400)
      const problem = await answer.json()
      assert.equal(problem.code, 'invalid_protobuf')
      assert.match(problem.detail, /ExportTraceServiceRequest/)
    })

    test('a JSON body sent as protobuf is a 400, never a 500', async () => {
      const answer = await post('/api/otlp/v1/logs', JSON.stringify({ resourceLogs: [] }), { 'content-type': 'application/x-protobuf' })
      assert.equal(answer.status, 400)
      assert.equal((await answer.json()).code, 'invalid_protobuf')
    })

    test('another content type is a 415 and another content encoding too', async () => {
      assert.equal((await post('/api/otlp/v1/metrics', 'hello', { 'content-type': 'text/plain' })).status, 415)
      assert.equal((await post('/api/otlp/v1/metrics', '{}', { 'content-type': 'application/json', 'content-encoding': 'br' })).status, 415)
    })

    test('a 50 MB body is a 413 before it is read, and so is a gzip body that decompresses past the limit', async () => {
      const huge = await post('/api/otlp/v1/traces', Buffer.alloc(50 * 1024 * 1024), { 'content-type': 'application/x-protobuf' })
      assert.equal(huge.status, 413)
      assert.equal((await huge.json()).code, 'batch_too_large')
      const bomb = gzipSync(Buffer.alloc(t.config.ingest.maxBatchBytes + 1024))
      const answer = await post('/api/otlp/v1/traces', bomb, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' })
      assert.equal(answer.status, 413)
      assert.equal((await answer.json()).code, 'batch_too_large')
    })

    test('a key without the otlp scope gets 403, and an otlp-only key cannot use the signed ingest', async () => {
      const answer = await post('/api/otlp/v1/traces', '{}', { 'content-type': 'application/json' }, project.key)
      assert.equal(answer.status, 403)
      assert.equal((await answer.json()).code, 'scope_required')
      const signedWithOtlpKey = await ingest(t, { ...project, key }, [event('log', { message: 'x' })])
      assert.equal(signedWithOtlpKey.status, 403)
      assert.equal(signedWithOtlpKey.body.code, 'scope_required')
    })
  })
}

describe('OTLP/HTTP receiver limits', () => {
  test('past the project’s events limit the receiver answers 429 with Retry-After, as OTLP clients retry', async () => {
    const t = await startTestPortal(DIALECTS[0], { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '5' })
    try {
      const project = await createProject(t)
      const key = await otlpKey(t, project.id)
      const records = Array.from({ length: 5 }, (_, i) => ({ body: { stringValue: `line ${i}` } }))
      const body = { resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] }
      assert.equal((await t.request('POST', '/api/otlp/v1/logs', { token: key, body })).status, 200)
      const refused = await t.request('POST', '/api/otlp/v1/logs', { token: key, body })
      assert.equal(refused.status, 429)
      assert.ok(Number(refused.headers.get('retry-after')) >= 1)
    } finally {
      await t.close()
    }
  })
})
