import { createProject, event, ingest, type TestPortal, type TestProject } from '../support/portal.ts'
import { ERROR_STACK, ago } from './seed.ts'

export const RELEASE = 'checkout@2.5.0'
export const PREVIOUS_COMMIT = 'aaa1111aaaa'
export const RELEASE_COMMIT = 'ddd4444dddd'
/** The commit between the two deploys that touched the file of the error's in-app frame. */
export const SUSPECT_COMMIT = 'ccc3333cccc'
export const OTHER_COMMITS = ['bbb2222bbbb', RELEASE_COMMIT]
export const SLOW_TRACE_ID = '5a0f0000000000000000000000000001'

async function ingested(t: TestPortal, project: TestProject, events: unknown[]) {
  const answer = await ingest(t, project, events)
  if (answer.status !== 200 || answer.body.rejected.length > 0) throw new Error(`seed ingest: ${answer.status} ${answer.text}`)
}

/**
 * Issue 40's checkout story: a deploy of checkout@2.5.0 three hours ago, a pricing config change and a flag
 * going to 100 % just before it; latency jumps from about 100 ms to 900 ms after it; a new TypeError in it;
 * commits between the previous deploy and this one, one of them touching the error's in-app file.
 */
export async function seedCheckout(t: TestPortal, name = 'checkout'): Promise<TestProject> {
  const project = await createProject(t, name)
  const latency = Array.from({ length: 24 }, (_, index) => {
    const minutes = 470 - index * 20
    return event('performance', { service: 'checkout', metric: 'http.server.duration', value: minutes > 180 ? 100 + (index % 3) * 5 : 900 + (index % 3) * 50, unit: 'ms' }, ago(minutes))
  })
  const traces = Array.from({ length: 8 }, (_, index) => {
    const slow = index >= 4
    const traceId = slow && index === 7 ? SLOW_TRACE_ID : `5a0f00000000000000000000000000${String(10 + index)}`
    return event(
      'trace',
      {
        traceId,
        spanId: `root${index}`,
        serviceName: 'checkout',
        name: 'GET',
        kind: 'server',
        durationMs: slow ? 900 + index * 100 : 90 + index,
        attributes: { 'http.request.method': 'GET', 'http.route': '/api/quote', 'http.response.status_code': slow && index === 7 ? 504 : 200 },
        resource: { 'service.name': 'checkout', 'deployment.environment': 'production' },
      },
      ago(slow ? 150 - (index - 4) * 20 : 400 - index * 20),
    )
  })
  await ingested(t, project, [
    event('deploy', { service: 'checkout', version: '2.4.0', release: 'checkout@2.4.0', environment: 'production', status: 'succeeded', commit: PREVIOUS_COMMIT }, ago(600)),
    event('deploy', { service: 'checkout', version: '2.5.0', release: RELEASE, environment: 'production', status: 'succeeded', commit: RELEASE_COMMIT }, ago(180)),
    event('config', { path: 'config/pricing.yaml', actor: 'bob', diff: '--- a/config/pricing.yaml\n+++ b/config/pricing.yaml\n-cache: true\n+cache: false' }, ago(200)),
    event('feature_flag', { key: 'new-pricing', enabled: true, rollout: 100, actor: 'ana' }, ago(190)),
    event('repository', { provider: 'github', repo: 'acme/checkout', branch: 'main', commit: PREVIOUS_COMMIT, author: 'carol', message: 'Release 2.4.0' }, ago(620)),
    event('repository', { provider: 'github', repo: 'acme/checkout', branch: 'main', commit: 'bbb2222bbbb', author: 'dave', message: 'Quote from the new pricing service', files: ['src/pricing/quote.ts'] }, ago(400)),
    event('repository', { provider: 'github', repo: 'acme/checkout', branch: 'main', commit: SUSPECT_COMMIT, author: 'erin', message: 'Invoice totals from the quote', files: ['src/billing/invoice.ts', 'src/billing/tax.ts'] }, ago(300)),
    event('repository', { provider: 'github', repo: 'acme/checkout', branch: 'main', commit: RELEASE_COMMIT, author: 'carol', message: 'Release 2.5.0', files: ['CHANGELOG.md'] }, ago(190)),
    event('repository', { provider: 'github', repo: 'acme/checkout', branch: 'main', commit: 'eee5555eeee', author: 'dave', message: 'After the release', files: ['src/billing/invoice.ts'] }, ago(60)),
    ...latency,
    ...traces,
    ...[0, 1, 2].map((n) =>
      event('log', { level: n === 2 ? 'error' : 'warn', module: 'pricing.quote', serviceName: 'pricing', message: `quote for cart c_${n}81 took 2300 ms: the pricing service answered after the checkout's own deadline, so the cached price was used`, fields: { 'service.name': 'pricing', cartId: `c_${n}81` }, traceId: SLOW_TRACE_ID }, ago(120 - n)),
    ),
  ])
  const capture = await t.request('POST', '/api/errors/capture', {
    token: project.key,
    body: { name: 'TypeError', message: "Cannot read properties of undefined (reading 'total')", stack: ERROR_STACK, release: RELEASE, environment: 'production', service: 'checkout', timestamp: ago(170) },
  })
  if (capture.status !== 201) throw new Error(`capture: ${capture.status} ${capture.text}`)
  return project
}
