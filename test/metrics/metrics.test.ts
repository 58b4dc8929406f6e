import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format'
import { createProject, DIALECTS, event, ingest, startTestPortal, type TestPortal } from '../support/portal.ts'
import { createEndpoint, deliver, endedDelivery } from '../webhooks/api.ts'
import { startReceiver, type Receiver } from '../webhooks/receiver.ts'

const METRICS_TOKEN = 'metrics-token-0123456789abcdef'

type Scrape = Map<string, MetricFamily> & { text: string }

async function scrape(t: TestPortal): Promise<Scrape> {
  const response = await t.request('GET', '/metrics', { token: METRICS_TOKEN })
  assert.equal(response.status, 200, response.text)
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  return Object.assign(new Map(parsePrometheusTextFormat(response.text).map((family) => [family.name, family])), { text: response.text })
}

/** The counter or gauge sample of `name` whose labels include `labels`; 0 when absent. */
function sample(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
  const family = scraped.get(name)
  assert.ok(family, `${name} is exported`)
  assert.notEqual(family.type, 'HISTOGRAM', 'histograms: histogramCount')
  const found = family.metrics.find((m) => Object.entries(labels).every(([key, value]) => m.labels?.[key] === value))
  return found ? Number(found.value) : 0
}

/**
 * A labelled histogram's observation count. The parser merges a histogram's series into one (it expects a
 * single series), so its `_count` line is read from the text once the parser has accepted the whole of it.
 */
function histogramCount(scraped: Scrape, name: string, labels: Record<string, string>): number {
  assert.equal(scraped.get(name)?.type, 'HISTOGRAM', name)
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`).join(',')
  const line = scraped.text.split('\n').find((l) => l.startsWith(`${name}_count{${wanted}}`))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

for (const dialect of DIALECTS) {
  describe(`GET /metrics on ${dialect}`, () => {
    let t: TestPortal
    let receiver: Receiver
    before(async () => {
      t = await startTestPortal(dialect, {
        METRICS_TOKEN,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0.1',
        WEBHOOK_TIMEOUT_MS: '1000',
        INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '3',
      })
      receiver = await startReceiver()
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    test('refused without METRICS_TOKEN as the bearer: none, another token, an admin access token', async () => {
      for (const token of [undefined, `${METRICS_TOKEN}x`, t.adminToken]) {
        const response = await t.request('GET', '/metrics', { token })
        assert.equal(response.status, 401, `${token}: ${response.text}`)
        assert.equal(response.body.code, token === undefined ? 'missing_token' : 'invalid_token')
        assert.doesNotMatch(response.text, /portal_/)
      }
    })

    test('every series is exported and parses as the Prometheus text format', async () => {
      const scraped = await scrape(t)
      const expected: [string, MetricFamily['type']][] = [
        ['portal_ingest_events_total', 'COUNTER'],
        ['portal_http_responses_total', 'COUNTER'],
        ['portal_http_request_duration_seconds', 'HISTOGRAM'],
        ['portal_refusals_total', 'COUNTER'],
        ['portal_commit_duration_seconds', 'HISTOGRAM'],
        ['portal_commit_batch_size', 'HISTOGRAM'],
        ['portal_pending_events', 'GAUGE'],
        ['portal_db_pool_waiting', 'GAUGE'],
        ['portal_db_pool_connections', 'GAUGE'],
        ['portal_webhook_queue_depth', 'GAUGE'],
        ['portal_webhook_oldest_pending_age_seconds', 'GAUGE'],
        ['portal_webhook_attempts_total', 'COUNTER'],
        ['portal_retention_deleted_rows_total', 'COUNTER'],
        ['portal_retention_last_run_timestamp_seconds', 'GAUGE'],
        ['nodejs_eventloop_lag_seconds', 'GAUGE'],
        ['nodejs_eventloop_lag_p99_seconds', 'GAUGE'],
      ]
      for (const [name, type] of expected) assert.equal(scraped.get(name)?.type, type, name)
      assert.ok(sample(scraped, 'nodejs_eventloop_lag_p99_seconds') > 0)
      const dashboard = fs.readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')
      const used = new Set([...dashboard.matchAll(/\b(?:portal|nodejs)_[a-z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, '')))
      for (const name of used) assert.ok(scraped.has(name), `docs/grafana-dashboard.json uses ${name}, which is exported`)
      const pool = scraped.get('portal_db_pool_connections')!.metrics
      if (dialect === 'postgres') assert.ok(pool.some((m) => m.labels?.state === 'idle'), 'the PostgreSQL pool is reported')
      else assert.equal(pool.length, 0, 'SQLite has no pool')
    })

    test('ingest, captures, refusals and webhook attempts move their series', async () => {
      const project = await createProject(t)
      // only this type: the capture's error.group.created notification goes elsewhere
      await createEndpoint(t, project.id, receiver.url('/ok/metrics'), { eventTypes: ['metrics.moved'] })
      await createEndpoint(t, project.id, receiver.url('/fail/metrics'), { eventTypes: ['metrics.moved'] })
      const before = await scrape(t)

      const batch = await ingest(t, project, [event('log', { message: 'one' }), event('log', { message: 'two' }), event('deploy', { service: 'api' }), event('nope', {}), event('log', {})])
      assert.equal(batch.status, 200, batch.text)
      const capture = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'TypeError', message: 'x is undefined' } })
      assert.equal(capture.status, 201, capture.text)
      // at once, so that the batches bucket (3 a second) empties however slow the machine
      const statuses = (await Promise.all(Array.from({ length: 8 }, () => ingest(t, project, [event('log', { message: 'more' })])))).map((r) => r.status)
      const limited = statuses.filter((status) => status === 429).length
      const admitted = statuses.filter((status) => status === 200).length
      assert.ok(limited >= 1 && limited + admitted === statuses.length, `INGEST_RATE_LIMIT_BATCHES_PER_SECOND gave 429s: ${statuses}`)
      const sent = await deliver(t, project.id, 'metrics.moved', {})
      for (const d of sent.deliveries) await endedDelivery(t, d.id)

      const after = await scrape(t)
      const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels)
      const observed = (name: string, labels: Record<string, string>) => histogramCount(after, name, labels) - histogramCount(before, name, labels)
      assert.equal(moved('portal_ingest_events_total', { type: 'log', outcome: 'accepted' }), 2 + admitted)
      assert.equal(moved('portal_ingest_events_total', { type: 'deploy', outcome: 'accepted' }), 1)
      assert.equal(moved('portal_ingest_events_total', { type: 'log', outcome: 'rejected' }), 1, 'a log without its message')
      assert.equal(moved('portal_ingest_events_total', { type: 'unknown', outcome: 'rejected' }), 1, 'a type no module takes')
      assert.ok(moved('portal_http_responses_total', { route: '/api/ingest', method: 'POST', status_class: '2xx' }) >= 1)
      assert.equal(moved('portal_http_responses_total', { route: '/api/ingest', method: 'POST', status_class: '4xx' }), limited)
      assert.equal(moved('portal_http_responses_total', { route: '/api/errors/capture', method: 'POST', status_class: '2xx' }), 1)
      assert.equal(moved('portal_refusals_total', { status: '429', cause: 'rate_limited' }), limited)
      assert.ok(observed('portal_commit_duration_seconds', { committer: 'ingest' }) >= 1)
      assert.equal(observed('portal_commit_duration_seconds', { committer: 'errors' }), 1)
      assert.ok(observed('portal_commit_batch_size', { committer: 'ingest' }) >= 1)
      assert.ok(observed('portal_http_request_duration_seconds', { route: '/api/ingest', method: 'POST' }) >= 2)
      assert.equal(moved('portal_webhook_attempts_total', { status: 'succeeded' }), 1)
      assert.equal(moved('portal_webhook_attempts_total', { status: 'failed' }), 2, 'the failing endpoint: the first attempt and its one retry')
      assert.equal(sample(after, 'portal_webhook_queue_depth'), 0)
      assert.equal(sample(after, 'portal_pending_events', { committer: 'ingest' }), 0)
    })

    test('the webhook queue depth counts pending deliveries', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/hang/metrics'))
      await deliver(t, project.id, 'queued', {})
      await deliver(t, project.id, 'queued', {})
      assert.equal(sample(await scrape(t), 'portal_webhook_queue_depth'), 2)
    })
  })
}

describe('GET /metrics without METRICS_TOKEN', () => {
  test('is not served', async () => {
    const t = await startTestPortal('sqlite')
    try {
      const response = await t.request('GET', '/metrics', { token: t.adminToken })
      assert.equal(response.status, 404)
      assert.match(response.body.detail, /METRICS_TOKEN/)
    } finally {
      await t.close()
    }
  })
})
