// The smoke set `.ci/run` also runs on each supported Node.js LTS besides the machine's: a real portal process
// started as `npm start` starts it, ingest of every event type, every read of the OpenAPI document once, the
// OTLP and Sentry intakes through their stock clients, and a SIGKILL followed by a restart that loses nothing.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { trace } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import * as Sentry from '@sentry/node'
import { modules } from '../src/modules/registry.ts'
import { createProject, createTestDatabase, event, ingest, requester, type PortalClient, type TestProject } from './support/portal.ts'
import { killPortal, spawnPortal, type PortalProcess } from './support/process.ts'

const ADMIN = `pat_${'s'.repeat(32)}`

describe(`smoke on Node.js ${process.version}: start, ingest, every read, OTLP and Sentry, SIGKILL and restart`, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let env: Record<string, string>
  let portal: PortalProcess
  let client: PortalClient
  let project: TestProject
  let traceId = ''

  before(async () => {
    database = await createTestDatabase('sqlite')
    env = { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000',
      // what this set checks is the runtime, not shedding, which a machine busy with other work would trigger
      LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0' }
    portal = await spawnPortal(env)
    client = { request: requester(portal.url), adminToken: ADMIN }
    project = await createProject(client, 'smoke', ADMIN, ['ingest', 'otlp', 'sentry'])
  })
  after(async () => {
    await killPortal(portal)
    await database.drop()
  })

  test('every event type is ingested and read back from its module', async () => {
    const response = await ingest(client, project, modules.map((module) => event(module.type, module.examples.valid)))
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.accepted, modules.length, response.text)
    for (const module of modules) {
      const read = await client.request('GET', `${module.basePath}/events?project_id=${project.id}`, { token: ADMIN })
      assert.equal(read.status, 200, `${module.type}: ${read.text}`)
      assert.ok(read.body.data.length >= 1, `${module.type}: the event ingested`)
    }
  })

  test('a span from the stock OTLP protobuf exporter becomes a trace', async () => {
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${portal.url}/api/otlp/v1/traces`, headers: { authorization: `Bearer ${project.key}` } }) })],
    })
    const span = provider.getTracer('smoke').startSpan('GET /smoke')
    span.end()
    await provider.forceFlush()
    await provider.shutdown()
    traceId = span.spanContext().traceId
    const read = await client.request('GET', `/api/traces/${traceId}?project_id=${project.id}`, { token: ADMIN })
    assert.equal(read.status, 200, read.text)
    assert.equal(trace.getActiveSpan(), undefined)
  })

  test('an exception from @sentry/node becomes an error group', async () => {
    Sentry.init({ dsn: project.sentryDsn, defaultIntegrations: false, release: 'smoke@1' })
    Sentry.captureException(new Error('smoke test failure'))
    assert.equal(await Sentry.flush(5000), true)
    await Sentry.close()
    const groups = await client.request('GET', `/api/errors/groups?project_id=${project.id}&release=smoke@1`, { token: ADMIN })
    assert.equal(groups.status, 200, groups.text)
    assert.equal(groups.body.data.length, 1)
  })

  test('every read of the OpenAPI document without a path parameter answers 200 once', async () => {
    const document = (await client.request('GET', '/api/openapi.json', { token: ADMIN })).body
    let reads = 0
    for (const [template, item] of Object.entries<any>(document.paths)) {
      const get = item.get
      if (!get || template.includes('{') || !template.startsWith('/api/')) continue
      const query = new URLSearchParams()
      const required = [...(item.parameters ?? []), ...(get.parameters ?? [])].filter((parameter: any) => parameter.in === 'query' && parameter.required)
      const known: Record<string, string> = { project_id: project.id, trace_id: traceId, from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString(), bucket_seconds: '60' }
      for (const parameter of required) query.set(parameter.name, known[parameter.name] ?? String(parameter.example ?? parameter.schema?.examples?.[0] ?? ''))
      const answer = await client.request('GET', `${template}${query.size ? `?${query}` : ''}`, { token: ADMIN })
      assert.equal(answer.status, 200, `GET ${template}: ${answer.text}`)
      reads++
    }
    assert.ok(reads >= modules.length * 2, `${reads} reads: at least every module's events and status`)
  })

  test('a SIGKILL right after an acknowledged batch, then a restart: every event is there, once', async () => {
    const messages = Array.from({ length: 200 }, (_, i) => `before the kill ${i}`)
    const response = await ingest(client, project, messages.map((message) => event('log', { message })))
    assert.equal(response.status, 200, response.text)
    await killPortal(portal, 'SIGKILL')
    portal = await spawnPortal(env)
    client = { request: requester(portal.url), adminToken: ADMIN }
    const read = await client.request('GET', `/api/modules/logs/events?project_id=${project.id}&q=before%20the%20kill&limit=500`, { token: ADMIN })
    assert.equal(read.status, 200, read.text)
    assert.deepEqual(read.body.data.map((e: any) => e.data.message).sort(), [...messages].sort())
  })
})
