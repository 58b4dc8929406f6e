import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { eventTypes } from '../../src/modules/registry.ts'
import { DIALECTS, type TestProject } from '../../test/support/portal.ts'
import { PortalClient, type PortalClientOptions } from '../src/index.ts'
import { closedPort } from './support/fault-proxy.ts'
import { proxiedClient, proxiedPortal } from './support/portals.ts'
import { messageCounts, storedEvents } from './support/stored-events.ts'

// Batching and rejections are the client's behaviour, the same on either database: one is enough.
const dialect = DIALECTS[0]

describe(`SDK batching and rejections (portal on ${dialect})`, () => {
  const setup = proxiedPortal(dialect)
  const clientFor = (options: Partial<PortalClientOptions> = {}) => proxiedClient(setup, options)

  const logs = (project: TestProject) => storedEvents(setup.t.url, setup.t.adminToken, project.id)

  test('typed methods send signed events that the portal stores with their type and timestamp', async () => {
    const { project, client } = await clientFor()
    const ts = new Date('2026-03-01T10:00:00.000Z')
    client.log({ message: 'typed', level: 'warn', fields: { requestId: 'r1' } }, { ts })
    client.deploy({ service: 'api', version: '1.2.3', status: 'succeeded' })
    client.featureFlag({ key: 'new-ui', enabled: true, rollout: 25 })
    await client.close()

    assert.deepEqual(client.stats(), { queued: 0, inFlight: 0, accepted: 3, rejected: 0, dropped: 0, retries: 0 })
    const [log] = await logs(project)
    assert.equal(log.ts, ts.toISOString())
    assert.deepEqual(log.data, { message: 'typed', level: 'warn', fields: { requestId: 'r1' } })
    const flags = await storedEvents(setup.t.url, setup.t.adminToken, project.id, '/api/flags')
    assert.deepEqual(flags[0].data, { key: 'new-ui', enabled: true, rollout: 25 })
  })

  test('batches hold at most maxBatchEvents events', async () => {
    const { project, client, firstIngest } = await clientFor({ maxBatchEvents: 10 })
    for (let i = 0; i < 25; i++) client.log({ message: `count ${i}` })
    await client.close()
    assert.deepEqual(
      setup.proxy.ingests.slice(firstIngest).map((ingest) => ingest.events),
      [10, 10, 5],
    )
    assert.equal((await logs(project)).length, 25)
  })

  test('batch bodies stay within maxBatchBytes', async () => {
    const { project, client, firstIngest } = await clientFor({ maxBatchBytes: 2000 })
    for (let i = 0; i < 40; i++) client.log({ message: `bytes ${i} ${'x'.repeat(150)}` })
    await client.close()
    const batches = setup.proxy.ingests.slice(firstIngest)
    assert.ok(batches.length >= 4, `40 events of ~200 bytes need at least 4 batches of 2000 bytes, got ${batches.length}`)
    for (const batch of batches) assert.ok(batch.bodyBytes <= 2000, `a batch body of ${batch.bodyBytes} bytes`)
    assert.equal((await logs(project)).length, 40)
  })

  test('with several batches in flight, flush() resolves only when every earlier event is stored', async () => {
    const { project, client, firstIngest } = await clientFor({ maxBatchEvents: 25, maxConcurrentBatches: 4, flushIntervalMs: 60_000 })
    for (let i = 0; i < 310; i++) client.log({ message: `parallel ${i}` })
    await client.flush()
    assert.equal(client.stats().accepted, 310)
    assert.equal(setup.proxy.ingests.length - firstIngest, 13)
    const counts = messageCounts(await logs(project))
    assert.equal(counts.size, 310)
    assert.ok([...counts.values()].every((count) => count === 1))
    await client.close()
  })

  test('a lone event is sent after flushIntervalMs without flush() or close()', async () => {
    const { project, client, firstIngest } = await clientFor({ flushIntervalMs: 100 })
    const started = performance.now()
    client.log({ message: 'on time' })
    while (setup.proxy.ingests.length === firstIngest && performance.now() - started < 3000) await sleep(10)
    const waited = setup.proxy.ingests[firstIngest].at - started
    assert.ok(waited >= 90 && waited < 1000, `sent after ${waited} ms`)
    await client.close()
    assert.equal((await logs(project)).length, 1)
  })

  test('a full queue drops its oldest events and counts them', async () => {
    const { project, client } = await clientFor({ maxQueueSize: 5, flushIntervalMs: 60_000 })
    for (let i = 0; i < 8; i++) client.log({ message: `queued ${i}` })
    assert.deepEqual(client.stats(), { queued: 5, inFlight: 0, accepted: 0, rejected: 0, dropped: 3, retries: 0 })
    await client.close()
    assert.deepEqual([...messageCounts(await logs(project)).keys()].sort(), ['queued 3', 'queued 4', 'queued 5', 'queued 6', 'queued 7'])
  })

  test('events the portal refuses go to onRejected with their reason, once, and the others are stored', async () => {
    const { project, client, rejected, firstIngest } = await clientFor()
    client.log({ message: 'kept' })
    client.send({ type: 'audit', data: { action: 'no actor' } } as any)
    client.audit({ actor: 'ann', statusCode: 700 })
    client.send({ type: 'nonsense', data: {} } as any)
    await client.close()

    assert.deepEqual(
      rejected.map((r) => [(r.event as any).type, r.reason]),
      [
        ['audit', 'data.actor: required'],
        ['audit', 'data.statusCode: must be at most 599'],
        ['nonsense', `type: must be one of ${eventTypes.join(', ')}`],
      ],
    )
    assert.deepEqual((rejected[0].event as any).data, { action: 'no actor' })
    assert.equal(setup.proxy.ingests.length - firstIngest, 1, 'a rejected event is never retried')
    assert.deepEqual(client.stats(), { queued: 0, inFlight: 0, accepted: 1, rejected: 3, dropped: 0, retries: 0 })
    assert.equal((await logs(project)).length, 1)
  })

  test('an event that is not an object, cannot be serialised or is larger than a batch is rejected without being sent', async () => {
    const { client, rejected, firstIngest } = await clientFor({ maxBatchBytes: 1024 })
    client.log({ message: 'big', fields: { n: 10n } })
    client.log({ message: 'x'.repeat(2000) })
    client.log({ message: 'bad date' }, { ts: new Date('nope') })
    client.send(undefined as any)
    await client.close()
    assert.match(rejected[0].reason, /^data: cannot be serialised to JSON/)
    assert.match(rejected[1].reason, /^event: \d+ bytes, larger than maxBatchBytes \(1024\)$/)
    assert.equal(rejected[2].reason, 'ts: must be a valid date')
    assert.equal(rejected[3].reason, 'event: must be an object with type and data')
    assert.equal(setup.proxy.ingests.length, firstIngest)
  })

  test('the data sent is the data at the time of the call, not after later changes', async () => {
    const { project, client } = await clientFor()
    const fields = { step: 1 }
    client.log({ message: 'snapshot', fields })
    fields.step = 2
    await client.close()
    assert.deepEqual((await logs(project))[0].data.fields, { step: 1 })
  })

  test('after close(), events are dropped and counted, and close() can be called again', async () => {
    const { client } = await clientFor()
    client.log({ message: 'before close' })
    await client.close()
    client.log({ message: 'after close' })
    await client.close()
    assert.deepEqual(client.stats(), { queued: 0, inFlight: 0, accepted: 1, rejected: 0, dropped: 1, retries: 0 })
  })

  test('ping() reports a healthy portal, and an unreachable one without throwing', async () => {
    const { project, client } = await clientFor()
    const healthy = await client.ping()
    assert.equal(healthy.ok, true)
    assert.equal(healthy.status, 200)
    const nowhere = new PortalClient({ baseUrl: await closedPort(), apiKey: project.key, webhookSecret: project.webhookSecret, timeoutMs: 2000 })
    const down = await nowhere.ping()
    assert.equal(down.ok, false)
    assert.equal(down.status, undefined)
    assert.match(String(down.detail), /ECONNREFUSED/)
  })

  test('the constructor refuses options that cannot work, naming them', () => {
    assert.throws(() => new PortalClient({ baseUrl: 'localhost:8080', apiKey: 'pk_x', webhookSecret: 's' }), /baseUrl must be an http\(s\) URL/)
    assert.throws(() => new PortalClient({ baseUrl: 'http://h', apiKey: '', webhookSecret: 's' }), /apiKey is required/)
    assert.throws(() => new PortalClient({ baseUrl: 'http://h', apiKey: 'k', webhookSecret: 's', maxBatchEvents: 0 }), /maxBatchEvents must be an integer of at least 1/)
  })
})

describe(`SDK against a portal with a small batch limit (${dialect})`, () => {
  const setup = proxiedPortal(dialect, { INGEST_RATE_LIMIT_MAX_BATCH_BYTES: '2048' })

  test('a 413 splits the batch until it fits; an event too large alone is rejected', async () => {
    const { project, client, rejected } = await proxiedClient(setup)
    for (let i = 0; i < 30; i++) client.log({ message: `split ${i} ${'y'.repeat(100)}` })
    client.log({ message: `too big ${'z'.repeat(3000)}` })
    await client.close()

    const answers = setup.proxy.ingests.map((ingest) => ingest.answer)
    assert.equal(answers[0], 413)
    assert.ok(answers.includes(200))
    const keys = setup.proxy.ingests.map((ingest) => ingest.idempotencyKey)
    assert.equal(new Set(keys).size, keys.length, 'each half is a new body, so it has a new idempotency key')
    assert.equal(rejected.length, 1)
    assert.match(rejected[0].reason, /^event: larger than the portal's batch size limit \(413 /)
    const counts = messageCounts(await storedEvents(setup.t.url, setup.t.adminToken, project.id))
    assert.equal(counts.size, 30)
    assert.ok([...counts.values()].every((count) => count === 1))
    assert.deepEqual(client.stats(), { queued: 0, inFlight: 0, accepted: 30, rejected: 1, dropped: 0, retries: 0 })
  })
})
