import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { decide } from '../src/ingest/rate-limit.ts'
import { DIALECTS, REDIS_URL, createProject, event, ingest, startTestPortal, type TestPortal } from './support/portal.ts'
import { startTcpProxy } from './faults/support/tcp-proxy.ts'

const logs = (n: number) => Array.from({ length: n }, (_, i) => event('log', { message: `m${i}` }))

describe('token buckets', () => {
  test('a batch larger than a second’s allowance is admitted when the bucket is full, leaving it in debt', () => {
    const first = decide(undefined, 0, 2500, 1000, 100)
    assert.equal(first.decision.allowed, true)
    assert.equal(first.next.events, -1500)
    const soon = decide(first.next, 1000, 1, 1000, 100)
    assert.equal(soon.decision.allowed, false, 'still in debt a second later')
    assert.equal(soon.decision.bucket, 'events')
    assert.equal(soon.decision.retryAfterSeconds, 1, 'the debt of 500 left after a second is repaid in 0.501 s')
    assert.equal(decide(first.next, 1400, 1, 1000, 100).decision.allowed, false)
    const later = decide(first.next, 1600, 1, 1000, 100)
    assert.equal(later.decision.allowed, true)
  })

  test('the batches bucket refuses the 101st batch of a second and says so', () => {
    let state
    for (let i = 0; i < 100; i++) {
      const step = decide(state, 0, 1, 1_000_000, 100)
      assert.equal(step.decision.allowed, true)
      state = step.next
    }
    const refused = decide(state, 0, 1, 1_000_000, 100)
    assert.equal(refused.decision.allowed, false)
    assert.equal(refused.decision.bucket, 'batches')
    assert.equal(refused.decision.retryAfterSeconds, 1)
  })
})

for (const dialect of DIALECTS) {
  describe(`ingest rate limits on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      // Every refusal below needs a whole bucket refilled (1 s for events, 0.5 s for batches), so a slow
      // machine between two requests does not turn an expected 429 into a 200.
      t = await startTestPortal(dialect, { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '20', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '2' })
    })
    after(() => t.close())

    test('INGEST_RATE_LIMIT_EVENTS_PER_SECOND gives 429 with Retry-After and RateLimit headers', async () => {
      const p = await createProject(t, 'events limit')
      const ok = await ingest(t, p, logs(20))
      assert.equal(ok.status, 200)
      assert.equal(ok.headers.get('ratelimit-limit'), '20')
      assert.equal(ok.headers.get('ratelimit-remaining'), '0')
      const limited = await ingest(t, p, logs(20))
      assert.equal(limited.status, 429)
      assert.equal(limited.body.code, 'rate_limited')
      assert.match(limited.body.detail, /events limit of 20 per second/)
      assert.ok(Number(limited.headers.get('retry-after')) >= 1)
      assert.equal(limited.headers.get('ratelimit-limit'), '20')
      const status = await t.request('GET', `/api/modules/logs/status?project_id=${p.id}`, { token: t.adminToken })
      assert.equal(status.body.events, 20, 'a refused batch stores nothing')
    })

    test('INGEST_RATE_LIMIT_BATCHES_PER_SECOND limits batches whatever their size', async () => {
      const p = await createProject(t, 'batches limit')
      for (let i = 0; i < 2; i++) assert.equal((await ingest(t, p, [])).status, 200)
      const limited = await ingest(t, p, [])
      assert.equal(limited.status, 429)
      assert.match(limited.body.detail, /batches limit of 2 per second/)
    })

    test('limits are per project', async () => {
      const a = await createProject(t, 'a')
      const b = await createProject(t, 'b')
      assert.equal((await ingest(t, a, logs(20))).status, 200)
      assert.equal((await ingest(t, a, logs(20))).status, 429)
      assert.equal((await ingest(t, b, logs(20))).status, 200)
    })

    test('error captures draw on the same project buckets as ingest', async () => {
      const p = await createProject(t, 'captures')
      const capture = () => t.request('POST', '/api/errors/capture', { token: p.key, body: { name: 'TypeError', message: 'boom' } })
      const first = await capture()
      assert.equal(first.status, 201)
      // Half the batches bucket is used and a twentieth of the events one: the headers report the batches.
      assert.equal(first.headers.get('ratelimit-limit'), '2')
      assert.equal(first.headers.get('ratelimit-remaining'), '1', 'a capture is one batch')
      // Both buckets full again; then a batch of 400 events leaves the events bucket 380 in debt, 19 s to
      // repay, so that no slow moment between the two requests can refill it.
      await sleep(1100)
      assert.equal((await ingest(t, p, logs(400))).status, 200)
      const limited = await capture()
      assert.equal(limited.status, 429)
      assert.equal(limited.body.code, 'rate_limited')
      assert.ok(Number(limited.headers.get('retry-after')) >= 1)
      const groups = await t.request('GET', `/api/errors/groups?project_id=${p.id}`, { token: t.viewerToken })
      assert.equal(groups.body.data[0].count, 1, 'the refused capture stored nothing')
    })

    test('an idempotent replay is answered even when the project is limited', async () => {
      const p = await createProject(t, 'replay')
      const key = randomUUID()
      const batch = logs(20)
      const first = await ingest(t, p, batch, { 'x-service-idempotency-key': key })
      assert.equal(first.status, 200)
      const replay = await ingest(t, p, batch, { 'x-service-idempotency-key': key })
      assert.equal(replay.status, 200)
      assert.equal(replay.headers.get('idempotent-replayed'), 'true')
    })
  })
}

describe('ingest rate limits shared through Redis', () => {
  test('two portals on one database share a project’s limit through REDIS_URL', async () => {
    const env = { REDIS_URL, INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '30', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000' }
    const first = await startTestPortal(DIALECTS.includes('postgres') ? 'postgres' : 'sqlite', env)
    const second = await startTestPortal(first.dialect, { ...env, DATABASE_URL: first.config.databaseUrl, PORTAL_DATA_DIR: first.config.dataDir })
    try {
      const p = await createProject(first, 'shared')
      assert.equal((await ingest(first, p, logs(30))).status, 200)
      const refused = await ingest(second, p, logs(30))
      assert.equal(refused.status, 429, 'the second instance sees the tokens the first one took')
    } finally {
      await second.close()
      await first.close()
    }
  })

  test('with Redis gone after the start, limits fall back to the instance with a warning, and ingest goes on', async () => {
    // Unreachable at start, Redis stops the start instead (test/startup.test.ts).
    const redis = new URL(REDIS_URL)
    const proxy = await startTcpProxy(Number(redis.port || 6379), redis.hostname)
    redis.host = proxy.address
    const t = await startTestPortal('sqlite', { REDIS_URL: redis.toString(), INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '10' })
    try {
      const p = await createProject(t, 'fallback')
      proxy.cut()
      await sleep(1100)
      assert.equal((await ingest(t, p, logs(10))).status, 200)
      assert.equal((await ingest(t, p, logs(10))).status, 429, 'the in-process buckets still limit')
      assert.ok(t.logs.some((line) => line.includes('redis unreachable')))
    } finally {
      await t.close()
      await proxy.close()
    }
  })
})
