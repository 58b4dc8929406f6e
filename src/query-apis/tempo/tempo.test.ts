import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { ingestAll, otherOrganisation, startReadsPortal } from '../../../test/support/module-reads.ts'
import { traceService } from '../../intake/otlp/proto.ts'

// The official OTLP messages (the vendored opentelemetry-proto, src/intake/otlp/proto.ts) decode what the portal sends.
const TracesData = traceService.request

/** A decoded message as protobufjs's toObject({ longs: String, bytes: String }) gives it: bytes in base64, 64-bit integers as strings. */
function plainMessage(value: any): any {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64')
  if (value && typeof value.toNumber === 'function') return value.toString()
  if (Array.isArray(value)) return value.map(plainMessage)
  if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).map((key) => [key, plainMessage(value[key])]))
  return value
}

const BASE = Date.parse('2026-03-15T12:00:00.000Z')
const iso = (seconds: number) => new Date(BASE + seconds * 1000).toISOString()
const TRACE_A = '4bf92f3577b34da6a3ce929d0e0e4736'
const TRACE_B = '0af7651916cd43dd8448eb211c80319c'
const TRACE_C = '11111111111111111111111111111111'

for (const dialect of DIALECTS) {
  describe(`Tempo query API on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    const tempo = async (path: string, options: { status?: number; tenant?: string | null; token?: string; accept?: string } = {}) => {
      const headers: Record<string, string> = {}
      const tenant = options.tenant === undefined ? project.id : options.tenant
      if (tenant !== null) headers['x-scope-orgid'] = tenant
      if (options.accept) headers.accept = options.accept
      const response = await fetch(`${t.url}/tempo/api/${path}`, { headers: { authorization: `Bearer ${options.token ?? t.viewerToken}`, ...headers } })
      const bytes = Buffer.from(await response.arrayBuffer())
      assert.equal(response.status, options.status ?? 200, `${path}: ${bytes.toString()}`)
      return { headers: response.headers, bytes, text: bytes.toString(), json: () => JSON.parse(bytes.toString()) }
    }

    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        // A: a slow checkout that failed in billing
        event('trace', { traceId: TRACE_A, spanId: 'a000000000000001', serviceName: 'checkout', name: 'POST /pay', durationMs: 2500, kind: 'server', status: { code: 'unset' }, attributes: { 'http.status_code': 502 } }, iso(0)),
        event('trace', { traceId: TRACE_A, spanId: 'a000000000000002', parentSpanId: 'a000000000000001', serviceName: 'billing', name: 'charge', durationMs: 2000, kind: 'client', status: { code: 'error', message: 'card declined' }, attributes: { 'card.brand': 'visa' } }, iso(0.1)),
        // B: a fast healthy checkout
        event('trace', { traceId: TRACE_B, spanId: 'b000000000000001', serviceName: 'checkout', name: 'GET /cart', durationMs: 40, kind: 'server', status: { code: 'ok' }, attributes: { 'http.status_code': 200 } }, iso(10)),
        // C: a slow worker job without errors
        event('trace', { traceId: TRACE_C, spanId: 'c000000000000001', serviceName: 'worker', name: 'nightly', durationMs: 5000, kind: 'internal', attributes: { 'job.kind': 'report' } }, iso(20)),
      ])
      await ingestAll(t, other.project, [event('trace', { traceId: TRACE_A, spanId: 'ffffffffffffffff', serviceName: 'evil', name: 'x', durationMs: 1 }, iso(0))])
    })
    after(() => t.close())

    test('a trace by id is OTLP, in JSON and in the protobuf Grafana asks for', async () => {
      const json = (await tempo(`traces/${TRACE_A}`)).json()
      const services = json.batches.map((batch: any) => batch.resource.attributes[0].value.stringValue).sort()
      assert.deepEqual(services, ['billing', 'checkout'])
      const charge = json.batches.flatMap((batch: any) => batch.scopeSpans.flatMap((scope: any) => scope.spans)).find((span: any) => span.name === 'charge')
      assert.equal(charge.parentSpanId, 'a000000000000001')
      assert.deepEqual(charge.status, { code: 2, message: 'card declined' })
      assert.equal(BigInt(charge.endTimeUnixNano) - BigInt(charge.startTimeUnixNano), 2_000_000_000n)

      const protobuf = await tempo(`traces/${TRACE_A}`, { accept: 'application/protobuf' })
      assert.equal(protobuf.headers.get('content-type'), 'application/protobuf')
      const decoded = plainMessage(TracesData.decode(protobuf.bytes))
      const spans = decoded.resourceSpans.flatMap((batch: any) => batch.scopeSpans.flatMap((scope: any) => scope.spans))
      assert.deepEqual(spans.map((span: any) => Buffer.from(span.spanId, 'base64').toString('hex')).sort(), ['a000000000000001', 'a000000000000002'])
      assert.deepEqual(spans.find((span: any) => span.name === 'POST /pay').attributes, [{ key: 'http.status_code', value: { intValue: '502' } }])

      const v2 = (await tempo(`v2/traces/${TRACE_A}`)).json()
      assert.equal(v2.trace.resourceSpans.length, 2)
      // v2 protobuf: Tempo's TraceByIDResponse, whose field 1 is the trace
      const v2protobuf = (await tempo(`v2/traces/${TRACE_A}`, { accept: 'application/protobuf' })).bytes
      assert.equal(v2protobuf[0], 0x0a)
      assert.deepEqual(v2protobuf.subarray(v2protobuf.length - protobuf.bytes.length), protobuf.bytes)

      const missing = await tempo('traces/ffffffffffffffffffffffffffffffff', { status: 404 })
      assert.match(missing.text, /trace not found/)
    })

    test('TraceQL search finds traces by resource, duration and status, newest first', async () => {
      const search = async (q: string) => (await tempo(`search?q=${encodeURIComponent(q)}&start=${BASE / 1000 - 60}&end=${BASE / 1000 + 60}`)).json()
      const failed = await search('{ resource.service.name = "billing" && duration > 1s && status = error }')
      assert.deepEqual(failed.traces.map((trace: any) => [trace.traceID, trace.rootServiceName, trace.rootTraceName, trace.durationMs]), [[TRACE_A, 'checkout', 'POST /pay', 2500]])
      assert.deepEqual(failed.traces[0].spanSets[0].spans.map((span: any) => span.spanID), ['a000000000000002'])
      assert.deepEqual((await search('{}')).traces.map((trace: any) => trace.traceID), [TRACE_C, TRACE_B, TRACE_A])
      assert.deepEqual((await search('{ .http.status_code >= 500 || name =~ "night.*" }')).traces.map((trace: any) => trace.traceID), [TRACE_C, TRACE_A])
      assert.deepEqual((await search('{ kind = server } && { status = error }')).traces.map((trace: any) => trace.traceID), [TRACE_A])
      assert.deepEqual((await search('{ traceDuration > 3s }')).traces.map((trace: any) => trace.traceID), [TRACE_C])
      assert.deepEqual((await search('{ span.card.brand = "visa" }')).traces.map((trace: any) => trace.traceID), [TRACE_A])
      const pipeline = await tempo(`search?q=${encodeURIComponent('{ } | count() > 1')}`, { status: 400 })
      assert.match(pipeline.text, /pipeline/)
    })

    test('tag search with a duration range, and tag names and values', async () => {
      const tags = (await tempo(`search?tags=${encodeURIComponent('service.name=checkout')}&minDuration=1s`)).json()
      assert.deepEqual(tags.traces.map((trace: any) => trace.traceID), [TRACE_A])
      const short = (await tempo(`search?tags=${encodeURIComponent('service.name=checkout')}&maxDuration=100ms`)).json()
      assert.deepEqual(short.traces.map((trace: any) => trace.traceID), [TRACE_B])
      assert.deepEqual((await tempo('search/tags')).json().tagNames, ['card.brand', 'http.status_code', 'job.kind', 'service.name'])
      assert.deepEqual((await tempo('search/tag/service.name/values')).json().tagValues, ['billing', 'checkout', 'worker'])
      assert.deepEqual((await tempo('v2/search/tag/span.http.status_code/values')).json().tagValues, [{ type: 'int', value: '200' }, { type: 'int', value: '502' }])
      const scopes = (await tempo('v2/search/tags')).json().scopes
      assert.deepEqual(scopes.find((scope: any) => scope.name === 'resource').tags, ['service.name'])
      assert.equal((await tempo('echo')).text, 'echo')
    })

    test('the tenant is a project of the token’s organisation', async () => {
      await tempo(`traces/${TRACE_A}`, { status: 400, tenant: null })
      await tempo(`traces/${TRACE_A}`, { status: 404, tenant: other.project.id })
      const own = (await tempo(`traces/${TRACE_A}`, { tenant: other.project.id, token: other.token })).json()
      assert.deepEqual(own.batches.map((batch: any) => batch.resource.attributes[0].value.stringValue), ['evil'])
      // the traces module's own read keeps its path and shape
      const portalRead = await t.request('GET', `/api/traces/${TRACE_A}?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(portalRead.body.spanCount, 2)
    })
  })
}
