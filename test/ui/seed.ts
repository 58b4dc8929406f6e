import { createProject, event, ingest, type TestPortal, type TestProject } from '../support/portal.ts'

const MINUTE = 60_000

/** `minutes` ago, as ISO 8601. */
export function ago(minutes: number): string {
  return new Date(Date.now() - minutes * MINUTE).toISOString()
}

export const ERROR_STACK = [
  "TypeError: Cannot read properties of undefined (reading 'total')",
  '    at computeInvoice (/srv/shop/src/billing/invoice.ts:88:21)',
  '    at checkout (/srv/shop/src/routes/checkout.ts:41:9)',
  '    at Layer.handle [as handle_request] (/srv/shop/node_modules/express/lib/router/layer.js:95:5)',
].join('\n')

export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'

async function ingested(t: TestPortal, project: TestProject, events: unknown[]) {
  const answer = await ingest(t, project, events)
  if (answer.status !== 200 || answer.body.rejected.length > 0) throw new Error(`seed ingest: ${answer.status} ${answer.text}`)
}

/**
 * A project with something on every page, sent through the public API as an SDK would:
 * logs, an error group with a stack, a three-span trace, deploys, costs, performance values,
 * flags, tenants, video jobs, reported webhook attempts and audit events.
 */
export async function seedShop(t: TestPortal): Promise<TestProject> {
  const project = await createProject(t, 'shop')
  await ingested(t, project, [
    event('log', { level: 'info', module: 'http', message: 'GET /cart 200 in 12 ms', fields: { route: '/cart', userId: 'u_17' } }, ago(9)),
    event('log', { level: 'warn', module: 'billing', message: 'card declined, retrying', fields: { userId: 'u_42', attempt: 2 } }, ago(8)),
    event('log', { level: 'error', module: 'billing', message: 'payment provider timeout after 3000 ms', fields: { userId: 'u_42', provider: 'acme-pay' } }, ago(7)),
    event('log', { level: 'info', module: 'worker', message: 'sent 14 reminder e-mails' }, ago(6)),
    event('log', { level: 'debug', module: 'http', message: 'cache hit for /products', fields: { route: '/products' } }, ago(5)),
    event('trace', { traceId: TRACE_ID, spanId: 'a1', serviceName: 'gateway', name: 'POST /checkout', durationMs: 240 }, ago(4)),
    event('trace', { traceId: TRACE_ID, spanId: 'b2', parentSpanId: 'a1', serviceName: 'billing', name: 'charge card', durationMs: 180 }, new Date(Date.parse(ago(4)) + 20).toISOString()),
    event('trace', { traceId: TRACE_ID, spanId: 'c3', parentSpanId: 'b2', serviceName: 'billing', name: 'SELECT invoices', durationMs: 35 }, new Date(Date.parse(ago(4)) + 40).toISOString()),
    event('deploy', { service: 'api', version: '1.4.0', environment: 'production', status: 'succeeded', commit: '9f2c1ab7e0' }, ago(300)),
    event('deploy', { service: 'api', version: '1.5.0', environment: 'production', status: 'failed', commit: 'c0ffee1234' }, ago(30)),
    event('deploy', { service: 'web', version: '2.1.0', environment: 'staging', status: 'succeeded', commit: '7a7a7a7a7a' }, ago(60)),
    event('cost', { provider: 'aws', service: 'compute', amount: 412.5, currency: 'USD', period: '2026-09' }, ago(90)),
    event('cost', { provider: 'aws', service: 'compute', amount: 455.1, currency: 'USD', period: '2026-10' }, ago(80)),
    event('cost', { provider: 'aws', service: 'storage', amount: 88.2, currency: 'USD', period: '2026-10' }, ago(70)),
    event('cost', { provider: 'hetzner', service: 'compute', amount: 120, currency: 'EUR', period: '2026-10' }, ago(65)),
    ...[120, 80, 95, 300, 140, 110, 90, 250].map((value, index) => event('performance', { service: 'api', metric: 'http.latency', value, unit: 'ms' }, ago(50 - index * 5))),
    event('feature_flag', { key: 'new-checkout', enabled: false, rollout: 0, actor: 'ana' }, ago(120)),
    event('feature_flag', { key: 'new-checkout', enabled: true, rollout: 25, actor: 'ana' }, ago(20)),
    event('feature_flag', { key: 'dark-mode', enabled: true, rollout: 100, actor: 'bo' }, ago(15)),
    event('tenant', { projectId: 'acme-corp', plan: 'starter', ingestLimitPerSecond: 100 }, ago(200)),
    event('tenant', { projectId: 'acme-corp', plan: 'growth', ingestLimitPerSecond: 500 }, ago(25)),
    event('video', { jobId: 'job-81', targetUrl: 'https://shop.example/demo', status: 'queued' }, ago(12)),
    event('video', { jobId: 'job-81', status: 'done', artifactUrl: 'https://cdn.example/job-81.mp4' }, ago(10)),
    event('webhook', { destination: 'crm', url: 'https://crm.example/hooks', statusCode: 502, attempt: 1 }, ago(2)),
    event('webhook', { destination: 'crm', url: 'https://crm.example/hooks', statusCode: 200, attempt: 2 }, ago(1)),
    event('audit', { actor: 'ana@shop.example', action: 'refund.issued', resource: 'order/1042', method: 'POST', path: '/admin/refunds', statusCode: 201 }, ago(3)),
  ])
  const rule = await t.request('POST', '/api/alerts/rules', {
    token: t.adminToken,
    body: { projectId: project.id, name: 'billing errors', signal: 'logs.count', filters: { module: 'billing', level: 'error' }, windowSeconds: 3600, condition: { op: 'above', critical: 10, warning: 0 } },
  })
  if (rule.status !== 201) throw new Error(`alert rule: ${rule.status} ${rule.text}`)
  return project
}

/** One error occurrence captured with the project's API key, as the SDK's captureException does. */
export async function captureError(t: TestPortal, project: TestProject, extra: Record<string, unknown> = {}) {
  const answer = await t.request('POST', '/api/errors/capture', {
    token: project.key,
    body: { name: 'TypeError', message: "Cannot read properties of undefined (reading 'total')", stack: ERROR_STACK, release: 'shop@1.5.0', environment: 'production', service: 'api', cartId: 'c_981', ...extra },
  })
  if (answer.status !== 201) throw new Error(`capture: ${answer.status} ${answer.text}`)
  return answer.body as { fingerprint: string }
}
