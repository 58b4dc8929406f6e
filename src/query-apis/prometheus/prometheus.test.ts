import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { promisify } from 'node:util'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { ingestAll, otherOrganisation, startReadsPortal } from '../../../test/support/module-reads.ts'

const BASE = Date.parse('2026-03-15T12:00:00.000Z')
const iso = (seconds: number) => new Date(BASE + seconds * 1000).toISOString()
const unix = (seconds: number) => String(BASE / 1000 + seconds)
// Debian's promtool, which .ci/run installs
const PROMTOOL = '/usr/bin/promtool'

const counter = (route: string, seconds: number, value: number) =>
  event('performance', { service: 'api', metric: 'http.requests', value, kind: 'sum', temporality: 'cumulative', monotonic: true, attributes: { route } }, iso(seconds))

for (const dialect of DIALECTS) {
  describe(`Prometheus query API on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    const prom = async (path: string, params: Record<string, string | string[]>, options: { status?: number; tenant?: string | null; token?: string; method?: 'GET' | 'POST' } = {}) => {
      const search = new URLSearchParams()
      for (const [name, value] of Object.entries(params)) for (const item of [value].flat()) search.append(name, item)
      const headers: Record<string, string> = {}
      const tenant = options.tenant === undefined ? project.id : options.tenant
      if (tenant !== null) headers['x-scope-orgid'] = tenant
      const response =
        options.method === 'POST'
          ? await t.request('POST', `/prometheus/api/v1/${path}`, { token: options.token ?? t.viewerToken, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: search.toString() })
          : await t.request('GET', `/prometheus/api/v1/${path}?${search}`, { token: options.token ?? t.viewerToken, headers })
      assert.equal(response.status, options.status ?? 200, `${path} ${JSON.stringify(params)}: ${response.text}`)
      return response.body
    }

    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        // a cumulative counter per route, every minute; /cart restarts (a counter reset) at 3 min
        ...[0, 10, 20, 30].map((value, i) => counter('/pay', i * 60, value)),
        ...[5, 7, 9, 1].map((value, i) => counter('/cart', i * 60, value)),
        // a gauge the portal's own ingest sends
        event('performance', { service: 'api', metric: 'queue.depth', value: 4, unit: 'jobs' }, iso(170)),
        event('performance', { service: 'worker', metric: 'queue.depth', value: 9, unit: 'jobs' }, iso(175)),
        // an OTLP histogram point: bounds 10 and 100, counts 1, 2, 1
        event('performance', { service: 'api', metric: 'http.server.duration', value: 50, kind: 'histogram', temporality: 'cumulative', count: 4, sum: 200, bucketCounts: [1, 2, 1], explicitBounds: [10, 100] }, iso(170)),
      ])
      await ingestAll(t, other.project, [event('performance', { service: 'evil', metric: 'queue.depth', value: 666 }, iso(170))])
    })
    after(() => t.close())

    test('an instant selector returns each series’ latest sample with its labels', async () => {
      const body = await prom('query', { query: 'queue_depth', time: unix(180) })
      assert.deepEqual(body.data, {
        resultType: 'vector',
        result: [
          { metric: { __name__: 'queue_depth', job: 'api' }, value: [BASE / 1000 + 180, '4'] },
          { metric: { __name__: 'queue_depth', job: 'worker' }, value: [BASE / 1000 + 180, '9'] },
        ],
      })
      const summed = await prom('query', { query: 'sum(queue_depth{job=~"api|worker"}) * 2', time: unix(180) })
      assert.deepEqual(summed.data.result, [{ metric: {}, value: [BASE / 1000 + 180, '26'] }])
      assert.deepEqual((await prom('query', { query: '1+1', time: unix(0) })).data, { resultType: 'scalar', result: [BASE / 1000, '2'] })
    })

    test('rate and increase extrapolate over counters as Prometheus does, resets included', async () => {
      const increase = await prom('query', { query: 'increase(http_requests{route="/pay"}[3m])', time: unix(180) })
      // samples at 60, 120, 180 s (10 → 30): 20 over 120 s, extrapolated to the window's start: 30
      assert.deepEqual(increase.data.result, [{ metric: { job: 'api', route: '/pay' }, value: [BASE / 1000 + 180, '30'] }])
      const rate = await prom('query', { query: 'sum by (route) (rate(http_requests[3m]))', time: unix(180) })
      assert.deepEqual(
        rate.data.result.map((sample: any) => [sample.metric.route, Number(sample.value[1]).toFixed(6)]),
        // /cart: 7 → 9 → 1 is 2 + 1 (after the reset) = 3 over 120 s; it would reach zero 280 s back, so 60 s is added: 4.5 / 180 s
        [['/cart', (4.5 / 180).toFixed(6)], ['/pay', (30 / 180).toFixed(6)]],
      )
      const range = await prom('query_range', { query: 'sum(rate(http_requests[2m]))', start: unix(120), end: unix(180), step: '60' })
      assert.equal(range.data.resultType, 'matrix')
      assert.deepEqual(range.data.result[0].values.map((value: any) => value[0]), [BASE / 1000 + 120, BASE / 1000 + 180])
    })

    test('histogram_quantile reads the buckets of OTLP histograms', async () => {
      const body = await prom('query', { query: 'histogram_quantile(0.5, sum by (le) (http_server_duration_bucket))', time: unix(180) })
      // rank 2 of 4 falls in (10, 100], which holds 2 of them after 1 below: 10 + 90 × ½
      assert.deepEqual(body.data.result, [{ metric: {}, value: [BASE / 1000 + 180, '55'] }])
      const count = await prom('query', { query: 'http_server_duration_count', time: unix(180) })
      assert.equal(count.data.result[0].value[1], '4')
    })

    test('labels, label values and series; POST with a form body as Prometheus’ clients send it', async () => {
      const range = { start: unix(0), end: unix(300) }
      assert.deepEqual((await prom('labels', range)).data, ['__name__', 'job', 'le', 'route'])
      assert.deepEqual((await prom('label/__name__/values', range)).data, ['http_requests', 'http_server_duration_bucket', 'http_server_duration_count', 'http_server_duration_sum', 'queue_depth'])
      assert.deepEqual((await prom('series', { ...range, 'match[]': 'http_requests' })).data, [
        { __name__: 'http_requests', job: 'api', route: '/cart' },
        { __name__: 'http_requests', job: 'api', route: '/pay' },
      ])
      const posted = await prom('query', { query: 'queue_depth{job="api"}', time: unix(180) }, { method: 'POST' })
      assert.equal(posted.data.result[0].value[1], '4')
      const refused = await prom('query', { query: 'rate(queue_depth[5m:1m])' }, { status: 400 })
      assert.equal(refused.status, 'error')
      assert.match(refused.error, /subquery/)
      const other1 = await prom('query', { query: 'queue_depth' }, { status: 404, tenant: other.project.id })
      assert.equal(other1.errorType, 'not_found')
    })

    test('metrics sent by the OpenTelemetry SDK are queryable by their Prometheus names', async () => {
      const otel = await createProject(t, 'otel')
      const key = (await t.request('POST', `/api/projects/${otel.id}/keys`, { token: t.adminToken, body: { name: 'otel', scopes: ['otlp'] } })).body.key
      const exporter = new OTLPMetricExporter({ url: `${t.url}/api/otlp/v1/metrics`, headers: { authorization: `Bearer ${key}` } })
      const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'checkout' }), readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })] })
      const meter = provider.getMeter('checkout')
      const duration = meter.createHistogram('http.server.duration', { unit: 'ms' })
      for (const value of [3, 30, 300]) duration.record(value, { 'http.route': '/orders' })
      meter.createCounter('orders.created').add(3)
      await provider.forceFlush()
      await provider.shutdown()
      const series = await prom('series', { 'match[]': ['{job="checkout"}'] }, { tenant: otel.id })
      const names = series.data.map((labels: any) => labels.__name__)
      assert.ok(names.includes('orders_created'), names.join())
      assert.ok(names.includes('http_server_duration_bucket'))
      const count = await prom('query', { query: 'sum(http_server_duration_count{http_route="/orders"})' }, { tenant: otel.id })
      assert.equal(count.data.result[0].value[1], '3')
    })

    test('promtool queries the portal with a token as its Basic password and the project in the URL', { skip: !fs.existsSync(PROMTOOL) && `${PROMTOOL} is not installed` }, async () => {
      const server = new URL(`${t.url}/prometheus`)
      server.username = 'grafana'
      server.password = t.viewerToken
      server.searchParams.set('project_id', project.id)
      const run = promisify(execFile)
      const instant = await run(PROMTOOL, ['query', 'instant', '--time', unix(180), server.toString(), 'queue_depth'], { timeout: 30_000 })
      assert.match(instant.stdout, /queue_depth\{job="api"\} => 4 @\[/)
      assert.match(instant.stdout, /queue_depth\{job="worker"\} => 9 @\[/)
      const series = await run(PROMTOOL, ['query', 'series', '--match', 'http_requests', '--start', unix(0), '--end', unix(300), server.toString()], { timeout: 30_000 })
      assert.match(series.stdout, /route="\/pay"/)
      await assert.rejects(run(PROMTOOL, ['query', 'instant', server.toString().replace(t.viewerToken, 'pat_wrong'), 'queue_depth'], { timeout: 30_000 }))
    })
  })
}
