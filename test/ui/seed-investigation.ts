import { event, ingest, type TestPortal, type TestProject } from '../support/portal.ts'
import { ago } from './seed.ts'

export const FAILING_TRACE_ID = '0af7651916cd43dd8448eb211c80319c'

const at = (base: string, ms: number) => new Date(Date.parse(base) + ms).toISOString()

/**
 * What the trace, config and repository pages need beyond the shop: a trace across three services with
 * a failed span (OTLP status error) and an HTTP 503, configuration changes with diffs, and pushes.
 */
export async function seedInvestigation(t: TestPortal, project: TestProject) {
  const start = ago(3)
  const answer = await ingest(t, project, [
    event('trace', { traceId: FAILING_TRACE_ID, spanId: 'r1', serviceName: 'gateway', name: 'POST /orders', durationMs: 1400, kind: 'server', status: { code: 'unset' }, attributes: { 'http.request.method': 'POST', 'http.route': '/orders', 'http.response.status_code': 503 } }, start),
    event('trace', { traceId: FAILING_TRACE_ID, spanId: 'o2', parentSpanId: 'r1', serviceName: 'orders', name: 'create order', durationMs: 900, status: { code: 'ok' }, attributes: { 'order.items': 3 } }, at(start, 100)),
    event('trace', { traceId: FAILING_TRACE_ID, spanId: 'p3', parentSpanId: 'o2', serviceName: 'payments', name: 'charge', durationMs: 700, status: { code: 'error', message: 'card declined' }, attributes: { 'payment.provider': 'acme-pay' } }, at(start, 250)),
    event('config', { path: 'config/app.yaml', actor: 'bob', diff: '--- a/config/app.yaml\n+++ b/config/app.yaml\n@@ -1,2 +1,2 @@\n-timeout: 5\n+timeout: 10\n retries: 3' }, ago(40)),
    event('config', { path: 'config/app.yaml', actor: 'ana', diff: '--- a/config/app.yaml\n+++ b/config/app.yaml\n@@ -2 +2 @@\n-retries: 3\n+retries: 5' }, ago(20)),
    event('config', { path: 'deploy/values.yaml', actor: 'ana', diff: '--- a/deploy/values.yaml\n+++ b/deploy/values.yaml\n@@ -4 +4 @@\n-replicas: 2\n+replicas: 4' }, ago(15)),
    event('repository', { provider: 'github', repo: 'acme/shop', branch: 'main', commit: '9f2c1e7d3b8a', author: 'carol' }, ago(50)),
    event('repository', { provider: 'github', repo: 'acme/shop', branch: 'main', commit: 'c0ffee12ab34', author: 'dave' }, ago(35)),
    event('repository', { provider: 'github', repo: 'acme/shop', branch: 'fix/checkout-timeout', commit: '7a7a7a7a7a7a', author: 'carol' }, ago(25)),
  ])
  if (answer.status !== 200 || answer.body.rejected.length > 0) throw new Error(`seed ingest: ${answer.status} ${answer.text}`)
}
