import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

const seconds = (s: number) => new Date(Date.parse(at(0)) + s * 1000).toISOString()
const span = (traceId: string, spanId: string, parentSpanId: string | undefined, serviceName: string, s: number, durationMs: number) =>
  event('trace', { traceId, spanId, ...(parentSpanId ? { parentSpanId } : {}), serviceName, name: `${serviceName} ${spanId}`, durationMs }, seconds(s))

for (const dialect of DIALECTS) {
  describe(`trace reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      other = await otherOrganisation(t)
      // Children arrive before their root; the db span ends 200 ms after the root span does.
      await ingestAll(t, project, [
        span('t1', 'db', 'api', 'postgres', 1, 1200),
        span('t1', 'api', 'root', 'api', 0.5, 500),
        span('t1', 'root', undefined, 'gateway', 0, 2000),
        span('t2', 'root', undefined, 'gateway', 10, 30),
        span('t3', 'root', undefined, 'worker', 20, 100),
        span('t3', 'job', 'root', 'worker', 20.01, 50),
        span('t4', 'orphan', 'missing', 'api', 30, 10),
        // t5 fails by OTLP status in a child span, t6 by an HTTP 503 in its root, t7 answered a 404 (not an error)
        span('t5', 'root', undefined, 'gateway', 40, 70),
        event('trace', { traceId: 't5', spanId: 'pay', parentSpanId: 'root', serviceName: 'billing', durationMs: 60, status: { code: 'error', message: 'card declined' } }, seconds(40.01)),
        event('trace', { traceId: 't6', spanId: 'root', serviceName: 'gateway', durationMs: 900, attributes: { 'http.response.status_code': 503 } }, seconds(50)),
        event('trace', { traceId: 't7', spanId: 'root', serviceName: 'gateway', durationMs: 900, attributes: { 'http.status_code': 404 }, status: { code: 'unset' } }, seconds(60)),
      ])
      await ingestAll(t, other.project, [span('t1', 'root', undefined, 'evil', 0, 1)])
    })
    after(() => t.close())

    test('lists traces newest first with root span, span count, services and total duration', async () => {
      const body = await read(t, `/api/traces?project_id=${project.id}`)
      assert.deepEqual(
        body.data.map((tr: any) => [tr.traceId, tr.rootSpan.spanId, tr.rootSpan.serviceName, tr.spanCount, tr.services, tr.durationMs, tr.startedAt]),
        [
          ['t7', 'root', 'gateway', 1, ['gateway'], 900, seconds(60)],
          ['t6', 'root', 'gateway', 1, ['gateway'], 900, seconds(50)],
          ['t5', 'root', 'gateway', 2, ['billing', 'gateway'], 70, seconds(40)],
          ['t3', 'root', 'worker', 2, ['worker'], 100, seconds(20)],
          ['t2', 'root', 'gateway', 1, ['gateway'], 30, seconds(10)],
          ['t1', 'root', 'gateway', 3, ['api', 'gateway', 'postgres'], 2200, seconds(0)],
        ],
      )
    })

    test('filters by any span’s service and by time; pages end at the limit', async () => {
      const postgres = await read(t, `/api/traces?project_id=${project.id}&service=postgres`)
      assert.deepEqual(postgres.data.map((tr: any) => tr.traceId), ['t1'])
      const window = await read(t, `/api/traces?project_id=${project.id}&from=${seconds(5)}&to=${seconds(15)}`)
      assert.deepEqual(window.data.map((tr: any) => tr.traceId), ['t2'])
      const none = await read(t, `/api/traces?project_id=${project.id}&service=nothing`)
      assert.deepEqual(none, { data: [], nextCursor: null })
      const first = await read(t, `/api/traces?project_id=${project.id}&limit=2`)
      const second = await read(t, `/api/traces?project_id=${project.id}&limit=10&cursor=${first.nextCursor}`)
      assert.deepEqual(second.data.map((tr: any) => tr.traceId), ['t5', 't3', 't2', 't1'])
      assert.equal(second.nextCursor, null)
    })

    test('filters by the root span’s duration and by error spans (OTLP status error, HTTP 5xx)', async () => {
      const ids = async (query: string) => (await read(t, `/api/traces?project_id=${project.id}&${query}`)).data.map((tr: any) => tr.traceId)
      assert.deepEqual(await ids('min_duration_ms=100'), ['t7', 't6', 't3', 't1'])
      assert.deepEqual(await ids('min_duration_ms=100&max_duration_ms=500'), ['t3'])
      assert.deepEqual(await ids('error=true'), ['t6', 't5'])
      assert.deepEqual(await ids('error=false'), ['t7', 't3', 't2', 't1'])
      assert.deepEqual(await ids('error=true&min_duration_ms=100'), ['t6'])
      assert.match((await read(t, `/api/traces?project_id=${project.id}&min_duration_ms=-1`, 400)).detail, /min_duration_ms/)
      assert.match((await read(t, `/api/traces?project_id=${project.id}&error=maybe`, 400)).detail, /error/)
    })

    test('searches by a span’s or its resource’s attribute, sorts by the root span’s duration, and shows route and status', async () => {
      const ids = async (query: string) => (await read(t, `/api/traces?project_id=${project.id}&${query}`)).data.map((tr: any) => tr.traceId)
      await ingestAll(t, project, [
        event('trace', { traceId: 't8', spanId: 'root', serviceName: 'checkout', durationMs: 1500, attributes: { 'http.route': '/api/quote', 'http.response.status_code': 504 }, resource: { 'deployment.environment': 'production' } }, seconds(70)),
        event('trace', { traceId: 't8', spanId: 'db', parentSpanId: 'root', serviceName: 'checkout', durationMs: 900, attributes: { 'db.system': 'postgresql' } }, seconds(70.1)),
      ])
      assert.deepEqual(await ids('attribute=db.system=postgresql'), ['t8'], 'any span’s attribute')
      assert.deepEqual(await ids('attribute=deployment.environment=production'), ['t8'], 'a resource attribute')
      assert.deepEqual(await ids('attribute=http.response.status_code=503'), ['t6'], 'numbers as text')
      assert.deepEqual(await ids('attribute=http.route=/nowhere'), [])
      assert.match((await read(t, `/api/traces?project_id=${project.id}&attribute=novalue`, 400)).detail, /attribute/)
      assert.deepEqual(await ids('sort=duration'), ['t1', 't8', 't7', 't6', 't3', 't5', 't2'])
      const first = await read(t, `/api/traces?project_id=${project.id}&sort=duration&limit=3`)
      const rest = await read(t, `/api/traces?project_id=${project.id}&sort=duration&cursor=${first.nextCursor}`)
      assert.deepEqual(rest.data.map((tr: any) => tr.traceId), ['t6', 't3', 't5', 't2'], 'the cursor goes on in duration order')
      const listed = (await read(t, `/api/traces?project_id=${project.id}&limit=4`)).data
      assert.deepEqual(listed.map((tr: any) => [tr.traceId, tr.route, tr.statusCode]), [['t8', '/api/quote', 504], ['t7', null, 404], ['t6', null, 503], ['t5', null, null]])
    })

    test('GET /api/traces/{traceId} gives every span in start order', async () => {
      const body = await read(t, `/api/traces/t1?project_id=${project.id}`)
      assert.deepEqual(body.spans.map((s: any) => [s.spanId, s.parentSpanId, s.serviceName, s.durationMs]), [
        ['root', null, 'gateway', 2000],
        ['api', 'root', 'api', 500],
        ['db', 'api', 'postgres', 1200],
      ])
      assert.equal(body.rootSpan.spanId, 'root')
      assert.equal(body.spanCount, 3)
      assert.equal(body.durationMs, 2200)
      assert.equal(body.truncated, false)
      const orphan = await read(t, `/api/traces/t4?project_id=${project.id}`)
      assert.equal(orphan.rootSpan, null)
      assert.equal(orphan.spans.length, 1)
    })

    test('unknown traces, other organisations and bad parameters', async () => {
      await read(t, `/api/traces/t9?project_id=${project.id}`, 404)
      await read(t, `/api/traces/t1?project_id=${project.id}`, 404, other.token)
      await read(t, `/api/traces?project_id=${project.id}`, 404, other.token)
      assert.match((await read(t, `/api/traces/t1`, 400)).detail, /project_id/)
      assert.match((await read(t, `/api/traces?project_id=${project.id}&span=root`, 400)).detail, /query\.span/)
      const spans = await read(t, `/api/traces/events?project_id=${project.id}&trace_id=t3`)
      assert.equal(spans.data.length, 2)
    })
  })
}
