import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { hmacSha256Hex } from '../src/identity/secrets.ts'
import { modules } from '../src/modules/registry.ts'
import { DIALECTS, createProject, event, ingest, readAll, startTestPortal, type TestPortal, type TestProject } from './support/portal.ts'

for (const dialect of DIALECTS) {
  describe(`ingest on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    before(async () => {
      t = await startTestPortal(dialect, { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '10000' })
      project = await createProject(t)
    })
    after(() => t.close())

    test('every module in the registry accepts its valid example, and it reads back from the module', async () => {
      const res = await ingest(t, project, modules.map((m) => event(m.type, { ...m.examples.valid, marker: `m-${m.type}` })))
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body, { accepted: modules.length, rejected: [] })
      for (const module of modules) {
        const read = await t.request('GET', `${module.basePath}/events?project_id=${project.id}&limit=500`, { token: t.viewerToken })
        assert.equal(read.status, 200, `${module.basePath}: ${read.text}`)
        const mine = read.body.data.filter((e: any) => e.data.marker === `m-${module.type}`)
        assert.equal(mine.length, 1, module.type)
        assert.equal(mine[0].type, module.type)
        assert.equal(mine[0].projectId, project.id)
        assert.match(mine[0].id, /^evt_/)
      }
    })

    test('every module in the registry refuses its invalid example with the reason it documents', async () => {
      const res = await ingest(t, project, modules.map((m) => event(m.type, m.examples.invalid.data)))
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.accepted, 0)
      assert.deepEqual(
        res.body.rejected.map((r: any) => [modules[r.index].type, r.reason]),
        modules.map((m) => [m.type, m.examples.invalid.reason]),
      )
    })

    test('a batch with malformed events accepts the valid ones and names each problem', async () => {
      const batch = [
        event('audit', { action: 'x' }),
        event('log', { message: 'ok' }),
        event('nope', {}),
        { type: 'log', ts: 'yesterday', data: { message: 'x' } },
        { type: 'log', ts: new Date().toISOString(), data: 'text' },
        event('audit', { actor: 'a', statusCode: 200.5 }),
        event('cost', { amount: 1, currency: 'usd' }),
        event('cost', { amount: 1, currency: 'EUR', period: '2026-13' }),
        event('repository', { repo: 'not-a-repo' }),
        event('feature_flag', { key: 'f', rollout: 101 }),
        event('video', { jobId: 'j', targetUrl: 'ftp://x' }),
        event('error', { release: '1.0' }),
        event('webhook', { url: 'https://x.example/', attempt: 0 }),
        event('trace', { traceId: 't', spanId: 's', durationMs: -1 }),
        42,
        event('log', { message: 'kept', unknownField: { nested: true } }),
      ]
      const res = await ingest(t, project, batch)
      assert.equal(res.status, 200)
      assert.equal(res.body.accepted, 2)
      const reasons = Object.fromEntries(res.body.rejected.map((r: any) => [r.index, r.reason]))
      assert.deepEqual(Object.keys(reasons).map(Number), [0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
      assert.equal(reasons[0], 'data.actor: required')
      assert.equal(reasons[2], `type: must be one of ${modules.map((m) => m.type).join(', ')}`)
      assert.match(reasons[3], /^ts: must be an ISO 8601 UTC timestamp/)
      assert.equal(reasons[4], 'data: must be an object')
      assert.equal(reasons[5], 'data.statusCode: must be an integer')
      assert.equal(reasons[6], 'data.currency: must be three upper-case letters (ISO 4217)')
      assert.equal(reasons[7], 'data.period: must be a month in YYYY-MM form')
      assert.equal(reasons[8], 'data.repo: must be in owner/name form')
      assert.equal(reasons[9], 'data.rollout: must be at most 100')
      assert.equal(reasons[10], 'data.targetUrl: must be an absolute http(s) URL')
      assert.match(reasons[11], /^data\.name: required/)
      assert.equal(reasons[12], 'data.attempt: must be at least 1')
      assert.equal(reasons[13], 'data.durationMs: must be at least 0')
      assert.match(reasons[14], /^event: must be an object/)
      const logs = await t.request('GET', `/api/modules/logs/events?project_id=${project.id}&q=kept`, { token: t.viewerToken })
      assert.deepEqual(logs.body.data[0].data.unknownField, { nested: true }, 'unknown fields inside data are kept')
    })

    test('timestamps must be UTC and real dates', async () => {
      const res = await ingest(t, project, [
        event('log', { message: 'a' }, '2026-02-30T00:00:00Z'),
        event('log', { message: 'b' }, '2026-01-01T00:00:00+02:00'),
        event('log', { message: 'c' }, '2026-01-01T00:00:00+00:00'),
        event('log', { message: 'd' }, '2026-01-01T00:00:00.123456Z'),
        event('log', { message: 'e' }, '2026-02-29T00:00:00Z'),
        event('log', { message: 'f' }, '2024-02-29T00:00:00Z'),
        event('log', { message: 'g' }, '2100-02-29T00:00:00Z'),
        event('log', { message: 'h' }, '2026-12-31T24:00:00Z'),
        event('log', { message: 'i' }, '2026-04-31T12:00:00Z'),
        event('log', { message: 'j' }, '2026-12-31T23:59:59.999Z'),
      ])
      assert.equal(res.body.accepted, 4)
      assert.deepEqual(res.body.rejected.map((r: any) => r.index), [0, 1, 4, 6, 7, 8])
    })

    test('401 without a bearer, with an unknown one, and with a revoked key', async () => {
      const body = JSON.stringify({ events: [] })
      const none = await t.request('POST', '/api/ingest', { body, headers: { 'x-service-signature': hmacSha256Hex(project.webhookSecret, body) } })
      assert.equal(none.status, 401)
      assert.equal(none.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      assert.equal(none.body.code, 'missing_token')
      const unknown = await ingest(t, { ...project, key: 'pk_unknown' }, [])
      assert.equal(unknown.status, 401)
      assert.equal(unknown.body.code, 'invalid_token')

      const other = await createProject(t, 'to revoke')
      assert.equal((await ingest(t, other, [])).status, 200)
      const revoke = await t.request('DELETE', `/api/projects/${other.id}/keys/${other.keyId}`, { token: t.adminToken })
      assert.equal(revoke.status, 204)
      assert.equal((await ingest(t, other, [])).status, 401)
    })

    test('an access token cannot ingest', async () => {
      const res = await ingest(t, { ...project, key: t.adminToken }, [])
      assert.equal(res.status, 403)
      assert.equal(res.body.code, 'api_key_required')
    })

    test('403 when the signature is missing, wrong, or made with another key’s secret', async () => {
      const body = JSON.stringify({ events: [event('log', { message: 'x' })] })
      const missing = await t.request('POST', '/api/ingest', { token: project.key, body })
      assert.equal(missing.status, 403)
      assert.equal(missing.body.code, 'missing_signature')
      const wrong = await ingest(t, project, [event('log', { message: 'x' })], { 'x-service-signature': 'ab'.repeat(32) })
      assert.equal(wrong.status, 403)
      assert.equal(wrong.body.code, 'invalid_signature')
      const other = await createProject(t, 'other')
      const crossed = await ingest(t, { ...project, webhookSecret: other.webhookSecret }, [event('log', { message: 'x' })])
      assert.equal(crossed.status, 403)
      const prefixed = await ingest(t, project, [], { 'x-service-signature': `sha256=${hmacSha256Hex(project.webhookSecret, JSON.stringify({ events: [] }))}` })
      assert.equal(prefixed.status, 403, 'the digest is sent bare, with no algorithm prefix')
    })

    test('415 for a body that is not JSON, after the signature', async () => {
      const body = 'events=1'
      const res = await t.request('POST', '/api/ingest', {
        token: project.key,
        body,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-service-signature': hmacSha256Hex(project.webhookSecret, body) },
      })
      assert.equal(res.status, 415)
      assert.equal(res.body.code, 'unsupported_media_type')
    })

    test('400 for broken JSON, missing events, __proto__ keys and a bad idempotency key', async () => {
      for (const [body, code] of [
        ['{"events": [', 'invalid_json'],
        ['', 'invalid_json'],
        ['{"batch": []}', 'missing_events'],
        ['{"events": {}}', 'missing_events'],
        ['[]', 'missing_events'],
        ['{"events": [], "__proto__": {"polluted": true}}', 'invalid_json'],
        ['{"events": [{"type":"log","ts":"2026-01-01T00:00:00Z","data":{"message":"x","constructor":{"prototype":{"p":1}}}}]}', 'invalid_json'],
      ]) {
        const res = await ingest(t, project, body)
        assert.equal(res.status, 400, body)
        assert.equal(res.body.code, code, body)
        assert.ok(res.body.detail.length > 0)
      }
      assert.equal(({} as any).polluted, undefined)
      const badKey = await ingest(t, project, [], { 'x-service-idempotency-key': 'not-a-uuid' })
      assert.equal(badKey.status, 400)
      assert.equal(badKey.body.code, 'invalid_idempotency_key')
    })

    test('deeply nested data is refused per event, not with a 500', async () => {
      const deep = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)
      const body = `{"events":[{"type":"log","ts":"2026-01-01T00:00:00Z","data":{"message":"deep","fields":${deep}}},{"type":"log","ts":"2026-01-01T00:00:00Z","data":{"message":"fine"}}]}`
      const res = await ingest(t, project, body)
      assert.equal(res.status, 200, res.text.slice(0, 200))
      assert.equal(res.body.accepted, 1)
      assert.deepEqual(res.body.rejected, [{ index: 0, reason: 'data: is nested deeper than 64 levels' }])
      const atLimit = '{"a":'.repeat(62) + '1' + '}'.repeat(62)
      const fits = await ingest(t, project, `{"events":[{"type":"log","ts":"2026-01-01T00:00:00Z","data":{"message":"deep","fields":${atLimit}}}]}`)
      assert.deepEqual(fits.body, { accepted: 1, rejected: [] }, '64 levels are stored')
    })

    test('a NUL character is stored as U+FFFD on both databases, and an escaped backslash before u0000 is left alone', async () => {
      const body = '{"events":[{"type":"log","ts":"2026-01-01T00:00:00Z","data":{"message":"nul\\u0000here \\\\u0000 kept","module":"bin\\u0000ary","k\\u0000ey":1}}]}'
      const res = await ingest(t, project, body)
      assert.deepEqual(res.body, { accepted: 1, rejected: [] }, res.text)
      const read = await t.request('GET', `/api/modules/logs/events?project_id=${project.id}&q=${encodeURIComponent('nul\uFFFDhere')}`, { token: t.viewerToken })
      assert.equal(read.body.data.length, 1, read.text)
      assert.equal(read.body.data[0].data.message, 'nul\uFFFDhere \\u0000 kept')
      assert.equal(read.body.data[0].data.module, 'bin\uFFFDary')
      assert.equal(read.body.data[0].data['k\uFFFDey'], 1)
      const project2 = await t.request('POST', '/api/projects', { token: t.adminToken, body: '{"name":"a\\u0000b"}' })
      assert.equal(project2.status, 201)
      assert.equal(project2.body.name, 'a\uFFFDb')
    })

    test('413 from Content-Length before the body is read, and for a streamed body past the limit', async () => {
      const small = await startTestPortal(dialect, { INGEST_RATE_LIMIT_MAX_BATCH_BYTES: '2048' })
      try {
        const p = await createProject(small)
        const big = JSON.stringify({ events: [event('log', { message: 'x'.repeat(4000) })] })
        const declared = await ingest(small, p, big)
        assert.equal(declared.status, 413)
        assert.equal(declared.body.code, 'batch_too_large')
        const chunks = [Buffer.from(big.slice(0, 1000)), Buffer.from(big.slice(1000))]
        const streamed = await fetch(`${small.url}/api/ingest`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.key}`, 'content-type': 'application/json', 'x-service-signature': hmacSha256Hex(p.webhookSecret, big) },
          body: new ReadableStream({
            pull(controller) {
              const next = chunks.shift()
              if (next) controller.enqueue(next)
              else controller.close()
            },
          }),
          duplex: 'half',
        } as RequestInit)
        assert.equal(streamed.status, 413)
        assert.equal((await streamed.json()).code, 'batch_too_large')
        const unauthenticated = await small.request('POST', '/api/ingest', { body: big })
        assert.equal(unauthenticated.status, 401, '401 comes before 413')
      } finally {
        await small.close()
      }
    })

    test('an idempotency key replays the first response and stores nothing twice', async () => {
      const p = await createProject(t, 'idempotent')
      const key = randomUUID()
      const batch = [event('log', { message: 'once' }), event('audit', {})]
      const first = await ingest(t, p, batch, { 'x-service-idempotency-key': key })
      assert.equal(first.status, 200)
      assert.equal(first.headers.get('idempotent-replayed'), null)
      const second = await ingest(t, p, batch, { 'x-service-idempotency-key': key })
      assert.equal(second.status, 200)
      assert.equal(second.headers.get('idempotent-replayed'), 'true')
      assert.equal(second.text, first.text)
      const logs = await t.request('GET', `/api/modules/logs/events?project_id=${p.id}`, { token: t.viewerToken })
      assert.equal(logs.body.data.length, 1)
      const otherProject = await createProject(t, 'idempotent 2')
      const scoped = await ingest(t, otherProject, batch, { 'x-service-idempotency-key': key })
      assert.equal(scoped.headers.get('idempotent-replayed'), null, 'keys are scoped to the project')
    })

    test('a repeated idempotency key with a different body replays the first response and stores nothing (spec 4.1 rule 2)', async () => {
      const p = await createProject(t, 'idempotent rebuilt')
      const key = randomUUID()
      const first = await ingest(t, p, [event('log', { message: 'first' }), event('audit', {})], { 'x-service-idempotency-key': key })
      assert.deepEqual(first.body, { accepted: 1, rejected: [{ index: 1, reason: 'data.actor: required' }] })
      for (const body of [[event('log', { message: 'rebuilt' }), event('log', { message: 'more' })], [], '{"not json']) {
        const repeat = await ingest(t, p, body, { 'x-service-idempotency-key': key })
        assert.equal(repeat.status, 200, `${JSON.stringify(body)}: ${repeat.text}`)
        assert.equal(repeat.headers.get('idempotent-replayed'), 'true')
        assert.equal(repeat.text, first.text)
      }
      const logs = await t.request('GET', `/api/modules/logs/events?project_id=${p.id}`, { token: t.viewerToken })
      assert.deepEqual(logs.body.data.map((e: any) => e.data.message), ['first'])
    })

    for (const bodies of ['identical', 'different'] as const) {
      test(`concurrent repeats of one idempotency key with ${bodies} bodies store one batch`, async () => {
        const p = await createProject(t, `concurrent ${bodies}`)
        const key = randomUUID()
        const batchOf = (n: number) => Array.from({ length: 50 }, (_, i) => event('log', { message: bodies === 'identical' ? `c${i}` : `r${n} c${i}` }))
        const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => ingest(t, p, batchOf(n), { 'x-service-idempotency-key': key })))
        for (const answer of answers) assert.ok(answer.status === 200 || answer.status === 409, `${answer.status} ${answer.text}`)
        for (const answer of answers.filter((a) => a.status === 409)) assert.equal(answer.body.code, 'idempotency_key_in_flight')
        const ok = answers.filter((a) => a.status === 200)
        assert.ok(ok.length >= 1)
        for (const answer of ok) assert.deepEqual(answer.body, { accepted: 50, rejected: [] })
        assert.equal(ok.filter((a) => a.headers.get('idempotent-replayed') === null).length, 1, 'exactly one original answer')
        const stored = await readAll(t, `/api/modules/logs/events?project_id=${p.id}`)
        assert.equal(stored.length, 50)
        if (bodies === 'different') assert.equal(new Set(stored.map((e) => e.data.message.split(' ')[0])).size, 1, 'all 50 from one request')
      })
    }

    test('a tenant event lowers its project’s events limit', async () => {
      const p = await createProject(t, 'tenant')
      assert.equal((await ingest(t, p, [event('tenant', { plan: 'free', ingestLimitPerSecond: 5 })])).status, 200)
      // 50 events leave the 5-event bucket 45 in debt, 9 s to repay: no slow moment before the next batch refills it
      const first = await ingest(t, p, Array.from({ length: 50 }, () => event('log', { message: 'x' })))
      assert.equal(first.status, 200)
      assert.equal(first.headers.get('ratelimit-limit'), '5')
      const second = await ingest(t, p, Array.from({ length: 5 }, () => event('log', { message: 'x' })))
      assert.equal(second.status, 429)
    })

    test('a tenant event cannot raise the limit above the install’s, nor set another project’s', async () => {
      const p = await createProject(t, 'tenant raise')
      const victim = await createProject(t, 'victim')
      await ingest(t, p, [event('tenant', { plan: 'x', ingestLimitPerSecond: 10_000_000 }), event('tenant', { plan: 'x', projectId: victim.id, ingestLimitPerSecond: 1 })])
      // Batches of a thousand events, so that the events bucket is the closer one, which the headers report.
      const thousand = Array.from({ length: 1000 }, () => event('log', { message: 'x' }))
      const res = await ingest(t, p, thousand)
      assert.equal(res.headers.get('ratelimit-limit'), '100000')
      const victimRes = await ingest(t, victim, thousand)
      assert.equal(victimRes.status, 200)
      assert.equal(victimRes.headers.get('ratelimit-limit'), '100000')
    })
  })
}
