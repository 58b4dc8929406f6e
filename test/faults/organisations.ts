import assert from 'node:assert/strict'
import { modules } from '../../src/modules/registry.ts'
import { createProject, event, ingest, type PortalClient, type TestProject } from '../support/portal.ts'
import { runPortalCli } from '../support/process.ts'
import { FAST_WEBHOOKS } from '../webhooks/api.ts'

/**
 * Environment of the fault suite's portals: webhook deliveries to a closed loopback port fail fast,
 * and ingest limits are high enough that fuzzed batches reach validation instead of a 429.
 */
export const FAULTS_ENV = {
  ...FAST_WEBHOOKS,
  WEBHOOK_RETRY_SCHEDULE: '0.1',
  INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000',
  INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000',
  // smaller than the default, so that bodies just over it stay quick to send
  INGEST_RATE_LIMIT_MAX_BATCH_BYTES: String(2 * 1024 * 1024),
  // Spawned portals have the event loop to themselves, but fuzzing loads it past any threshold: a
  // property that every answer is below 500 must not meet a shed 503 (tested in overload.test.ts).
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
}

/** Nothing listens on the discard port of loopback: deliveries to it fail at once. */
export const CLOSED_LOOPBACK_URL = 'http://127.0.0.1:9/hook'

export interface OrgTokens {
  id: string
  adminToken: string
  viewerToken: string
}

/** Everything an organisation owns that some route reads or changes by id. */
export interface Organisation extends OrgTokens {
  /** holds one of everything below */
  project: TestProject
  /** an empty second project of the same organisation */
  sibling: TestProject
  endpoint: { id: string; secret: string }
  deliveryId: string
  /** two error groups of `project` */
  fingerprints: [string, string]
  /** `project`'s number, which Sentry's DSN and paths name it by */
  projectNumber: string
  /** an alert rule of `project`, and a silence of it */
  ruleId: string
  silenceId: string
}

/** A new organisation with an admin and a viewer token, made the operator's way: the CLI against the portal's database (`env` names it). */
export async function createOrganisationWithCli(env: Record<string, string>, name: string): Promise<OrgTokens> {
  const id = await runPortalCli(env, ['org', 'create', '--name', name])
  assert.match(id, /^org_/)
  const adminToken = await runPortalCli(env, ['token', 'create', '--role', 'admin', '--org', id, '--name', `${name} admin`])
  const viewerToken = await runPortalCli(env, ['token', 'create', '--role', 'viewer', '--org', id, '--name', `${name} viewer`])
  return { id, adminToken, viewerToken }
}

/** Gives the organisation two projects, every module's example event, error groups, a webhook endpoint and a failed delivery. */
export async function seedOrganisation(t: PortalClient, tokens: OrgTokens): Promise<Organisation> {
  // Its key may feed every intake route, so that each is reached past its scope check.
  const project = await createProject(t, `${tokens.id} main`, tokens.adminToken, ['ingest', 'otlp', 'sentry'])
  const projectNumber = project.sentryDsn!.split('/').pop()!
  const sibling = await createProject(t, `${tokens.id} sibling`, tokens.adminToken)
  const ingested = await ingest(t, project, modules.map((module) => event(module.type, module.examples.valid)))
  assert.equal(ingested.status, 200, ingested.text)
  assert.deepEqual(ingested.body, { accepted: modules.length, rejected: [] })

  const fingerprints: string[] = []
  for (const name of ['SeededError', 'OtherSeededError']) {
    const captured = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name, message: 'seeded' } })
    assert.equal(captured.status, 201, captured.text)
    fingerprints.push(captured.body.groupFingerprint)
  }

  const endpoint = await t.request('POST', '/api/webhooks/endpoints', { token: tokens.adminToken, body: { projectId: project.id, url: CLOSED_LOOPBACK_URL } })
  assert.equal(endpoint.status, 201, endpoint.text)
  const delivered = await t.request('POST', '/api/webhooks/deliver', {
    token: tokens.adminToken,
    body: { projectId: project.id, eventType: 'seeded.event', payload: { seeded: true } },
  })
  assert.equal(delivered.status, 202, delivered.text)
  const rule = await t.request('POST', '/api/alerts/rules', { token: tokens.adminToken, body: { projectId: project.id, ...ALERT_RULE } })
  assert.equal(rule.status, 201, rule.text)
  const silence = await t.request('POST', '/api/alerts/silences', { token: tokens.adminToken, body: { projectId: project.id, ruleId: rule.body.id, endsAt: new Date(Date.now() + 86_400_000).toISOString(), reason: 'seeded' } })
  assert.equal(silence.status, 201, silence.text)

  return {
    ...tokens,
    project,
    sibling,
    endpoint: { id: endpoint.body.id, secret: endpoint.body.secret },
    deliveryId: delivered.body.deliveries[0].id,
    fingerprints: fingerprints as [string, string],
    projectNumber,
    ruleId: rule.body.id,
    silenceId: silence.body.id,
  }
}

const ALERT_RULE = { name: 'seeded rule', signal: 'logs.count', windowSeconds: 300, condition: { op: 'above', critical: 100 } }

export interface Operation {
  method: string
  /** the OpenAPI path, e.g. `/api/projects/{id}` */
  template: string
  /** who the document says may call it: an access token, a project API key, either (`any`), or anyone */
  security: 'accessToken' | 'apiKey' | 'any' | 'public' | 'metricsToken'
  hasBody: boolean
  queryParameters: string[]
  requiredQuery: string[]
}

/** Every operation the portal's own OpenAPI document lists, so that a new route is covered without editing the suite. */
export function operationsOf(document: any): Operation[] {
  const operations: Operation[] = []
  for (const [template, methods] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(methods)) {
      const schemes: string[] = (operation.security ?? document.security).flatMap((requirement: object) => Object.keys(requirement))
      const parameters: any[] = operation.parameters ?? []
      const query = parameters.filter((parameter) => parameter.in === 'query')
      operations.push({
        method: method.toUpperCase(),
        template,
        security: schemes.length === 0 ? 'public' : schemes.length === 2 ? 'any' : (schemes[0] as 'accessToken' | 'apiKey' | 'metricsToken'),
        hasBody: operation.requestBody !== undefined,
        queryParameters: query.map((parameter) => parameter.name),
        requiredQuery: query.filter((parameter) => parameter.required).map((parameter) => parameter.name),
      })
    }
  }
  return operations
}

export const isWrite = (operation: Operation) => operation.method !== 'GET'

// Each path parameter that is not a field of a module's events, named by the segment before it, and the resource of the organisation that fills it.
const PATH_PARAMETERS: Record<string, (org: Organisation) => string> = {
  'projects/{id}': (org) => org.project.id,
  'keys/{kid}': (org) => org.project.keyId,
  'groups/{fingerprint}': (org) => org.fingerprints[0],
  'plans/{tenantId}': (org) => org.project.id,
  'endpoints/{id}': (org) => org.endpoint.id,
  'deliveries/{id}': (org) => org.deliveryId,
  'api/{projectNumber}': (org) => org.projectNumber,
  // the query APIs (src/query-apis/): a label, a trace the seeded example holds, a tag
  'label/{name}': () => 'level',
  'traces/{traceId}': () => 't1',
  'tag/{tagName}': () => 'service.name',
  'rules/{id}': (org) => org.ruleId,
  'silences/{id}': (org) => org.silenceId,
}

/** A parameter of a module's read named after a field of its events (`/api/flags/flags/{key}`, `?metric=`): the seeded example's value. */
/** Required query parameters no module example names: the histogram reads' window and bucket, a trace's errors. */
const REQUIRED_QUERY: Record<string, () => string> = {
  from: () => new Date(Date.now() - 3_600_000).toISOString(),
  to: () => new Date().toISOString(),
  bucket_seconds: () => '300',
  trace_id: () => '4bf92f3577b34da6a3ce929d0e0e4736',
  // LogQL and PromQL alike, and a metric query, which Loki's instant query takes too
  query: () => 'count_over_time({level="info"}[5m])',
  start: () => String(Math.floor(Date.now() / 1000) - 3600),
  end: () => String(Math.floor(Date.now() / 1000)),
  step: () => '60',
  'match[]': () => '{level="info"}',
}

function exampleField(template: string, name: string): string | undefined {
  const module = modules.find((module) => template.startsWith(`${module.basePath}/`))
  const value = module?.examples.valid[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * The operation's URL with its path parameters filled from the organisation's resources (or by
 * `replace`, given each parameter's key, with a path segment sent as it is), its `project_id` set to the organisation's project, and
 * its other required query parameters to the seeded example's values.
 */
export function pathOf(operation: Operation, org: Organisation, replace?: (parameterKey: string) => string, query: Record<string, string> = {}): string {
  const path = operation.template.replace(/([^/]+)\/\{(\w+)\}/g, (_whole, segment: string, name: string) => {
    const key = `${segment}/{${name}}`
    const value = PATH_PARAMETERS[key]?.(org) ?? exampleField(operation.template, name)
    assert.ok(value !== undefined, `${operation.method} ${operation.template}: no resource fills ${key}; name it after a field of the module's example, or add it to PATH_PARAMETERS`)
    return `${segment}/${replace ? replace(key) : encodeURIComponent(value)}`
  })
  const search = new URLSearchParams(query)
  if (operation.queryParameters.includes('project_id') && !search.has('project_id')) search.set('project_id', org.project.id)
  for (const name of operation.requiredQuery.filter((name) => name !== 'project_id' && !search.has(name))) {
    const value = exampleField(operation.template, name) ?? REQUIRED_QUERY[name]?.()
    assert.ok(value !== undefined, `${operation.method} ${operation.template}: name the required ${name} after a field of the module's example`)
    search.set(name, value)
  }
  const text = search.toString()
  return text ? `${path}?${text}` : path
}

/** A valid body for each operation that takes one, aimed at the organisation's resources. */
export function validBodyOf(operation: Operation, org: Organisation): Record<string, unknown> {
  const bodies: Record<string, () => Record<string, unknown>> = {
    'POST /api/ingest': () => ({ events: [event('log', { message: 'valid' })] }),
    'POST /api/projects': () => ({ name: 'valid project' }),
    'PATCH /api/projects/{id}': () => ({ name: 'renamed project' }),
    'POST /api/projects/{id}/keys': () => ({ name: 'valid key' }),
    'POST /api/errors/capture': () => ({ name: 'ValidError', message: 'valid' }),
    'PATCH /api/errors/groups/{fingerprint}': () => ({ status: 'resolved' }),
    'POST /api/errors/groups/{fingerprint}/merge': () => ({ fingerprints: [org.fingerprints[1]] }),
    'POST /api/errors/groups/{fingerprint}/unmerge': () => ({ fingerprints: [org.fingerprints[1]] }),
    'PUT /api/errors/groups/{fingerprint}/assignee': () => ({ assignee: 'valid person' }),
    'PUT /api/modules/repository/links': () => ({ provider: 'github', baseUrl: 'https://github.com', repo: 'acme/checkout' }),
    'POST /api/webhooks/endpoints': () => ({ projectId: org.project.id, url: CLOSED_LOOPBACK_URL }),
    'PATCH /api/webhooks/endpoints/{id}': () => ({ description: 'changed' }),
    'POST /api/webhooks/deliver': () => ({ projectId: org.project.id, eventType: 'valid.event', payload: { valid: true } }),
    'POST /api/webhooks/endpoints/{id}/recover': () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
    'PUT /api/projects/{id}/retention': () => ({ days: 30 }),
    'POST /api/alerts/rules': () => ({ projectId: org.project.id, ...ALERT_RULE, name: 'another rule' }),
    'PUT /api/alerts/rules/{id}': () => ALERT_RULE,
    'POST /api/alerts/preview': () => ({ projectId: org.project.id, rule: ALERT_RULE }),
    'POST /api/alerts/rules-import': () => ({ projectId: org.project.id, version: 1, rules: [ALERT_RULE] }),
    'POST /api/alerts/silences': () => ({ projectId: org.project.id, endsAt: new Date(Date.now() + 3_600_000).toISOString(), reason: 'valid' }),
    'POST /api/otlp/v1/traces': () => ({ resourceSpans: [] }),
    'POST /api/otlp/v1/logs': () => ({ resourceLogs: [] }),
    'POST /api/otlp/v1/metrics': () => ({ resourceMetrics: [] }),
    // An envelope whose header line is this object and which carries no item; the store endpoint takes an event.
    'POST /api/{projectNumber}/envelope/': () => ({ event_id: '9ec79c33ec9942ab8353589fcb2e04dc' }),
    'POST /api/{projectNumber}/store/': () => ({ event_id: '9ec79c33ec9942ab8353589fcb2e04dc', message: 'valid' }),
  }
  const body = bodies[`${operation.method} ${operation.template}`]
  assert.ok(body, `${operation.method} ${operation.template} takes a body; add a valid one to validBodyOf`)
  return body()
}
