import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createProject, DIALECTS, startTestPortal, type TestPortal } from '../../test/support/portal.ts'
import { PortalClient, type PortalClientOptions } from '../src/index.ts'
import { createProjectAt, proxiedClient, proxiedPortal, startRestartablePortal } from './support/portals.ts'
import { messageCounts, storedEvents } from './support/stored-events.ts'

const FAST_RETRY = { minDelayMs: 20, maxDelayMs: 200 }

/** Every message stored exactly once: nothing lost, nothing duplicated. */
function assertEachOnce(counts: Map<string, number>, expected: string[]) {
  assert.deepEqual([...counts.keys()].sort(), [...expected].sort())
  const duplicated = [...counts].filter(([, count]) => count !== 1)
  assert.deepEqual(duplicated, [], 'no message is stored twice')
}

const messages = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix} ${i}`)

// Idempotency and restarts depend on what storage committed: these run on every database.
for (const dialect of DIALECTS) {
  describe(`SDK delivery across failures on ${dialect}`, () => {
    const setup = proxiedPortal(dialect)

    test('a batch whose answer was lost is sent again with the same idempotency key and stored once', async () => {
      const { t, proxy } = setup
      const { project, client, firstIngest } = await proxiedClient(setup, { retry: FAST_RETRY })
      proxy.loseIngestAnswers(1)
      const sent = messages('lost answer', 20)
      for (const message of sent) client.log({ message })
      await client.close()

      const [lost, retried] = proxy.ingests.slice(firstIngest)
      assert.equal(lost.answer, 'lost')
      assert.equal(retried.answer, 200)
      assert.equal(retried.replayed, true, 'the portal had stored the first send and replayed its answer')
      assert.equal(retried.idempotencyKey, lost.idempotencyKey)
      assertEachOnce(messageCounts(await storedEvents(t.url, t.adminToken, project.id)), sent)
      assert.deepEqual(client.stats(), { queued: 0, inFlight: 0, accepted: 20, rejected: 0, dropped: 0, retries: 1 })
    })

    test('a portal that restarts while the client sends loses nothing and stores nothing twice', async () => {
      const portal = await startRestartablePortal(dialect)
      try {
        const project = await createProjectAt(portal.url, portal.adminToken)
        const client = new PortalClient({
          baseUrl: portal.url,
          apiKey: project.key,
          webhookSecret: project.webhookSecret,
          maxBatchEvents: 20,
          flushIntervalMs: 10,
          retry: { minDelayMs: 50, maxDelayMs: 500 },
        })
        const sent = messages('restart', 400)
        let restarted: Promise<void> | undefined
        for (const [i, message] of sent.entries()) {
          client.log({ message })
          if (i === 150) restarted = portal.restart(500)
          if (i % 10 === 9) await sleep(5)
        }
        await restarted
        await client.close()

        assertEachOnce(messageCounts(await storedEvents(portal.url, portal.adminToken, project.id)), sent)
        const stats = client.stats()
        assert.equal(stats.accepted, 400)
        assert.equal(stats.dropped, 0)
        assert.ok(stats.retries > 0, 'the client met the portal while it was down')
      } finally {
        await portal.close()
      }
    })
  })
}

const dialect = DIALECTS[0]

describe(`SDK retries and refusals (portal on ${dialect})`, () => {
  const setup = proxiedPortal(dialect)
  const clientFor = (options: Partial<PortalClientOptions> = {}) => proxiedClient(setup, { retry: FAST_RETRY, ...options })

  test('503s for a while are retried with the same key until the portal takes the batch', async () => {
    const { project, client, firstIngest } = await clientFor()
    setup.proxy.failIngest(4, 503)
    const sent = messages('shedding', 30)
    for (const message of sent) client.log({ message })
    await client.close()

    const attempts = setup.proxy.ingests.slice(firstIngest)
    assert.deepEqual(attempts.map((attempt) => attempt.answer), [503, 503, 503, 503, 200])
    assert.equal(new Set(attempts.map((attempt) => attempt.idempotencyKey)).size, 1, 'one idempotency key for every retry of the batch')
    assertEachOnce(messageCounts(await storedEvents(setup.t.url, setup.t.adminToken, project.id)), sent)
    assert.equal(client.stats().retries, 4)
  })

  test('Retry-After is waited for even when the backoff would be shorter', async () => {
    const { client, firstIngest } = await clientFor()
    setup.proxy.failIngest(1, 503, { 'retry-after': '1' })
    client.log({ message: 'patient' })
    await client.close()
    const [refused, taken] = setup.proxy.ingests.slice(firstIngest)
    const waited = taken.at - refused.at
    assert.ok(waited >= 990, `retried after ${waited} ms`)
  })

  test('a batch still refused after maxRetries is dropped, counted and reported', async () => {
    const { client, errors, firstIngest } = await clientFor({ retry: { ...FAST_RETRY, maxRetries: 2 } })
    setup.proxy.failIngest(3, 503)
    for (const message of messages('given up', 5)) client.log({ message })
    await client.close()
    assert.equal(setup.proxy.ingests.length - firstIngest, 3)
    assert.deepEqual(
      errors.map((error) => [error.code, error.events]),
      [['retries_exhausted', 5]],
    )
    assert.match(errors[0].message, /after 2 retries: 503 injected by the test proxy/)
    assert.equal(client.stats().dropped, 5)
  })

  test('a wrong API key (401) stops the client at once: no retry, reported once, the rest dropped', async () => {
    const { client, errors, firstIngest } = await clientFor({ apiKey: 'pk_not_a_key', maxBatchEvents: 5 })
    for (const message of messages('unauthorised', 15)) client.log({ message })
    await client.close()
    client.log({ message: 'after refusal' })
    assert.equal(setup.proxy.ingests.length - firstIngest, 1)
    assert.deepEqual(
      errors.map((error) => [error.code, error.status, error.events]),
      [['credentials_refused', 401, 15]],
    )
    assert.deepEqual(client.stats(), { queued: 0, inFlight: 0, accepted: 0, rejected: 0, dropped: 16, retries: 0 })
  })

  test('a wrong webhook secret (403) stops the client the same way', async () => {
    const { client, errors, firstIngest } = await clientFor({ webhookSecret: 'whsec_wrong' })
    client.log({ message: 'badly signed' })
    await client.close()
    assert.equal(setup.proxy.ingests.length - firstIngest, 1)
    assert.deepEqual(
      errors.map((error) => [error.code, error.status]),
      [['credentials_refused', 403]],
    )
    assert.match(errors[0].message, /X-Service-Signature: does not match the body/)
  })
})

describe(`SDK under the portal's real rate limit (${dialect})`, () => {
  let t: TestPortal
  before(async () => {
    t = await startTestPortal(dialect, { INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100' })
  })
  after(() => t.close())

  test('429s are waited out as Retry-After says, and every event arrives once', async () => {
    const project = await createProject(t)
    const client = new PortalClient({ baseUrl: t.url, apiKey: project.key, webhookSecret: project.webhookSecret, maxBatchEvents: 50, retry: FAST_RETRY })
    const sent = messages('limited', 250)
    const started = performance.now()
    for (const message of sent) client.log({ message })
    await client.close()
    const elapsed = performance.now() - started

    assertEachOnce(messageCounts(await storedEvents(t.url, t.adminToken, project.id)), sent)
    assert.ok(client.stats().retries > 0, 'the portal answered 429 at least once')
    // 100 events/s with a full bucket of 100: 250 events cannot all be admitted in under 1.5 s.
    assert.ok(elapsed >= 1400, `took ${elapsed} ms`)
  })
})
