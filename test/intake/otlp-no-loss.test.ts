import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AggregationType, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { DIALECTS, createProject, readAll, startTestPortal, type TestPortal } from '../support/portal.ts'

type Signal = 'traces' | 'logs' | 'metrics'
const MODULE_OF: Record<Signal, { path: string; rejected: string }> = {
  traces: { path: '/api/traces', rejected: 'rejectedSpans' },
  logs: { path: '/api/modules/logs', rejected: 'rejectedLogRecords' },
  metrics: { path: '/api/modules/performance', rejected: 'rejectedDataPoints' },
}

const NANOS = '1732390000000000000'
const TRACE_ID = '5b8efff798038103d269b633813fc60c'
const span = (extra: Record<string, unknown> = {}) => ({ traceId: TRACE_ID, spanId: 'eee19b7ec3c1b174', name: 'GET /cart', startTimeUnixNano: NANOS, endTimeUnixNano: NANOS, ...extra })
const logRecord = (extra: Record<string, unknown> = {}) => ({ timeUnixNano: NANOS, severityNumber: 9, body: { stringValue: 'cart checked out' }, ...extra })
const requestOf = (signal: Signal, items: unknown[], metric?: Record<string, unknown>): Record<string, unknown> => {
  const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] }
  if (signal === 'traces') return { resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 's' }, spans: items }] }] }
  if (signal === 'logs') return { resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 's' }, logRecords: items }] }] }
  return { resourceMetrics: [{ resource, scopeMetrics: [{ metrics: [{ name: 'latency', unit: 'ms', ...(metric ?? { gauge: { dataPoints: items } }) }] }] }] }
}

/** Items of a request as the receiver counts them: every element of a span, log record or data point list. */
function itemsIn(signal: Signal, request: any): number {
  const lists = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
  const objects = (value: unknown) => lists(value).filter((item) => typeof item === 'object' && item !== null && !Array.isArray(item)) as any[]
  let count = 0
  const top = signal === 'traces' ? 'resourceSpans' : signal === 'logs' ? 'resourceLogs' : 'resourceMetrics'
  for (const resource of objects(request[top])) {
    const scopes = objects(resource[signal === 'traces' ? 'scopeSpans' : signal === 'logs' ? 'scopeLogs' : 'scopeMetrics'])
    for (const scope of scopes) {
      if (signal === 'traces') count += lists(scope.spans).length
      else if (signal === 'logs') count += lists(scope.logRecords).length
      else {
        for (const metric of objects(scope.metrics)) {
          for (const kind of ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary']) {
            const holder = metric[kind]
            if (typeof holder === 'object' && holder !== null && !Array.isArray(holder)) count += lists(holder.dataPoints).length
          }
        }
      }
    }
  }
  return count
}

for (const dialect of DIALECTS) {
  describe(`OTLP receiver: every item stored or reported (${dialect})`, () => {
    let t: TestPortal

    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(() => t.close())

    /** A project of its own and an otlp key, so its event count is this request's alone. */
    async function freshKey() {
      const project = await createProject(t, 'otlp shapes')
      const created = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: { name: 'otel', scopes: ['otlp'] } })
      return { projectId: project.id, key: created.body.key as string }
    }

    async function stored(signal: Signal, projectId: string): Promise<number> {
      const status = await t.request('GET', `${MODULE_OF[signal].path}/status?project_id=${projectId}`, { token: t.adminToken })
      assert.equal(status.status, 200, status.text)
      return status.body.events
    }

    /** Sends one request and proves that stored + reported = items; returns what was answered and stored. */
    async function sendAndAccount(signal: Signal, body: unknown) {
      const { projectId, key } = await freshKey()
      const answer = await t.request('POST', `/api/otlp/v1/${signal}`, { token: key, body })
      const items = itemsIn(signal, body)
      const storedCount = await stored(signal, projectId)
      if (answer.status === 400) {
        assert.equal(storedCount, 0, 'a refused request stores nothing')
        assert.equal(answer.body.code, 'invalid_otlp')
        return { answer, storedCount, rejected: items, projectId }
      }
      assert.equal(answer.status, 200, answer.text)
      const rejected = answer.body.partialSuccess?.[MODULE_OF[signal].rejected] ?? 0
      assert.equal(storedCount + rejected, items, `${signal}: ${storedCount} stored + ${rejected} reported of ${items} items (${answer.text})`)
      if (rejected > 0) assert.ok(answer.body.partialSuccess.errorMessage.length > 0, 'a refusal says why')
      return { answer, storedCount, rejected, projectId }
    }

    const variations: { name: string; signal: Signal; items: unknown[]; metric?: (items: unknown[]) => Record<string, unknown>; stored: number; reason?: RegExp }[] = [
      { name: 'a span that is null, a number or a list', signal: 'traces', items: [span(), null, 7, []], stored: 1, reason: /span 1: span: must be an object/ },
      { name: 'a span without traceId, with a null one, with a number', signal: 'traces', items: [span({ traceId: undefined }), span({ traceId: null }), span({ traceId: 12 }), span()], stored: 1, reason: /span 0: data\.traceId: required/ },
      { name: 'a span whose attributes, events or links are not lists', signal: 'traces', items: [span({ attributes: 5 }), span({ events: 'x' }), span({ links: {} }), span({ attributes: null, events: null, links: null })], stored: 1, reason: /span 0: attributes: must be a list/ },
      { name: 'a span with a name, status or kind of another type', signal: 'traces', items: [span({ name: 42, status: 'bad', kind: {} })], stored: 1 },
      { name: 'a log record that is null, or with a missing, null or object body', signal: 'logs', items: [null, logRecord({ body: undefined }), logRecord({ body: null }), logRecord({ body: { kvlistValue: { values: [{ key: 'a', value: { intValue: '3' } }] } } })], stored: 3, reason: /log record 0: log record: must be an object/ },
      { name: 'a log record with severity as a name, as text, as a wrong type', signal: 'logs', items: [logRecord({ severityNumber: 'SEVERITY_NUMBER_ERROR' }), logRecord({ severityNumber: null, severityText: 'WARN' }), logRecord({ severityNumber: [], severityText: 5 })], stored: 3 },
      { name: 'a log record whose attributes are not a list', signal: 'logs', items: [logRecord({ attributes: { a: 1 } }), logRecord()], stored: 1, reason: /log record 0: attributes/ },
      { name: 'gauge points as double, as int string, as int number, without a value, with a null one', signal: 'metrics', items: [{ asDouble: 1.5 }, { asInt: '7' }, { asInt: 9 }, {}, { asDouble: null }], stored: 3, reason: /data point 3: data\.value: required/ },
      { name: 'sum points, monotonic and not', signal: 'metrics', items: [{ asInt: '3' }, { asDouble: 2 }], metric: (items) => ({ sum: { dataPoints: items, isMonotonic: true, aggregationTemporality: 2 } }), stored: 2 },
      { name: 'histogram points: with observations, with count 0, without a sum, null', signal: 'metrics', items: [{ count: '2', sum: 4, bucketCounts: ['1', '1'], explicitBounds: [1] }, { count: '0', sum: 0 }, { count: '3' }, null], metric: (items) => ({ histogram: { dataPoints: items, aggregationTemporality: 1 } }), stored: 1, reason: /data point 1: count: the histogram point has no observations/ },
      { name: 'exponential histogram points: with observations, with count 0, with buckets of the wrong type', signal: 'metrics', items: [{ count: 4, sum: 10, scale: 2, zeroCount: 1, positive: { offset: 1, bucketCounts: [1, 2] } }, { count: 0 }, { count: 2, sum: 2, positive: { bucketCounts: 'x' } }], metric: (items) => ({ exponentialHistogram: { dataPoints: items } }), stored: 1, reason: /data point 1: count: the exponential histogram point has no observations/ },
      { name: 'summary points: with quantiles, without, with count 0', signal: 'metrics', items: [{ count: '5', sum: 50, quantileValues: [{ quantile: 0.5, value: 9 }, { quantile: 0.99 }] }, { count: 1, sum: 3, quantileValues: null }, { count: 0, sum: 0 }], metric: (items) => ({ summary: { dataPoints: items } }), stored: 2, reason: /data point 2: count: the summary point has no observations/ },
      { name: 'data points of a metric without a name', signal: 'metrics', items: [{ asDouble: 1 }], metric: (items) => ({ name: undefined, gauge: { dataPoints: items } }), stored: 0, reason: /data\.metric: required/ },
    ]
    for (const variation of variations) {
      test(`${variation.signal}: ${variation.name} — each stored or reported`, async () => {
        const body = requestOf(variation.signal, variation.items, variation.metric?.(variation.items))
        const { answer, storedCount } = await sendAndAccount(variation.signal, body)
        assert.equal(answer.status, 200)
        assert.equal(storedCount, variation.stored)
        if (variation.reason) assert.match(answer.body.partialSuccess.errorMessage, variation.reason)
      })
    }

    test('a list field that is not a list is a 400 naming it, and nothing is stored', async () => {
      const { answer } = await sendAndAccount('traces', { resourceSpans: [{ scopeSpans: [{ spans: 'abc' }] }] })
      assert.equal(answer.status, 400)
      assert.match(answer.body.detail, /resourceSpans\[0\]\.scopeSpans\[0\]\.spans: must be a list/)
    })

    test('a log record with exception attributes is also an error occurrence linked to its trace', async () => {
      const attributes = [
        { key: 'exception.type', value: { stringValue: 'PaymentDeclined' } },
        { key: 'exception.message', value: { stringValue: 'card 42 declined' } },
      ]
      const { projectId } = await sendAndAccount('logs', requestOf('logs', [logRecord({ attributes, traceId: TRACE_ID, spanId: 'eee19b7ec3c1b174' })]))
      const groups = await readAll(t, `/api/errors/groups?project_id=${projectId}`)
      assert.equal(groups.length, 1)
      assert.equal(groups[0].name, 'PaymentDeclined')
      const occurrences = await readAll(t, `/api/errors/occurrences?project_id=${projectId}&trace_id=${TRACE_ID}`)
      assert.equal(occurrences.length, 1)
      assert.equal(occurrences[0].spanId, 'eee19b7ec3c1b174')
    })

    for (const encoding of ['proto', 'json'] as const) {
      test(`exponential histograms from the ${encoding} metric exporter are stored with their buckets`, async () => {
        const { projectId, key } = await freshKey()
        process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${t.url}/api/otlp`
        process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer ${key}`
        const exporter = encoding === 'proto' ? new ProtoMetricExporter() : new JsonMetricExporter()
        delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
        delete process.env.OTEL_EXPORTER_OTLP_HEADERS
        const provider = new MeterProvider({
          resource: resourceFromAttributes({ 'service.name': 'exp' }),
          readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
          views: [{ instrumentName: 'latency', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } }],
        })
        const latency = provider.getMeter('exp').createHistogram('latency', { unit: 'ms' })
        for (const value of [1, 2, 4, 8, 1000]) latency.record(value)
        await provider.forceFlush()
        await provider.shutdown()
        const [point] = await readAll(t, `/api/modules/performance/events?project_id=${projectId}&metric=latency`)
        assert.equal(point.data.kind, 'exponential_histogram')
        assert.equal(point.data.count, 5)
        assert.equal(point.data.value, 1015 / 5)
        assert.equal(point.data.positive.bucketCounts.reduce((a: number, b: number) => a + b, 0) + point.data.zeroCount, 5)
      })
    }

    test('fuzz: requests of random shapes — what is neither stored nor reported is zero', async () => {
      const anyField = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant([]), fc.constant({}))
      const mutate = (base: Record<string, unknown>, fields: string[]) =>
        fc.record(Object.fromEntries(fields.map((field) => [field, fc.oneof({ weight: 3, arbitrary: fc.constant(base[field]) }, { weight: 1, arbitrary: anyField })]))).map((changes) => ({ ...base, ...changes }))
      const item = (signal: Signal) =>
        fc.oneof(
          { weight: 4, arbitrary: signal === 'traces' ? mutate(span(), ['traceId', 'spanId', 'name', 'attributes', 'events', 'status', 'kind', 'startTimeUnixNano']) : signal === 'logs' ? mutate(logRecord(), ['body', 'severityNumber', 'severityText', 'attributes', 'traceId', 'timeUnixNano']) : mutate({ asDouble: 1, count: '2', sum: 3, attributes: [] }, ['asDouble', 'asInt', 'count', 'sum', 'attributes', 'quantileValues']) },
          { weight: 1, arbitrary: anyField },
        )
      const metricKind = fc.constantFrom('gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary')
      const request = fc.constantFrom<Signal>('traces', 'logs', 'metrics').chain((signal) =>
        fc.record({ signal: fc.constant(signal), items: fc.array(item(signal), { maxLength: 6 }), kind: metricKind, listShape: fc.oneof({ weight: 9, arbitrary: fc.constant('list') }, { weight: 1, arbitrary: fc.constant('string') }) }),
      )
      let unaccounted = 0
      await fc.assert(
        fc.asyncProperty(request, async ({ signal, items, kind, listShape }) => {
          const list = listShape === 'list' ? items : 'not a list'
          const body = requestOf(signal, list as unknown[], signal === 'metrics' ? { [kind]: { dataPoints: list } } : undefined)
          const { storedCount, rejected } = await sendAndAccount(signal, body)
          unaccounted += itemsIn(signal, body) - storedCount - rejected
        }),
        { numRuns: 40, seed: 38 },
      )
      assert.equal(unaccounted, 0)
    })
  })
}
