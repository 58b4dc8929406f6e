import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { createProject, createTestDatabase, DIALECTS, startTestPortalOn, type TestDatabase, type TestPortal } from '../support/portal.ts'
import { createEndpoint, deliver, endedDelivery, FAST_WEBHOOKS, readDelivery } from './api.ts'
import { eventually, startReceiver, verifyCall, type Receiver } from './receiver.ts'

// Slow enough to act between attempts, fast enough for a test.
const PACED = { ...FAST_WEBHOOKS, WEBHOOK_RETRY_SCHEDULE: '0.4,0.4,0.4,0.4,0.4,0.4,0.4,0.4' }

async function attemptsAtLeast(t: TestPortal, deliveryId: string, count: number) {
  return eventually(async () => {
    const delivery = await readDelivery(t, deliveryId)
    return delivery.attempts.length >= count ? delivery : undefined
  }, 10_000, `${count} attempts of ${deliveryId}`)
}

for (const dialect of DIALECTS) {
  describe(`webhook queue durability on ${dialect}`, () => {
    let database: TestDatabase
    let receiver: Receiver
    before(async () => {
      database = await createTestDatabase(dialect, { migrated: true })
      receiver = await startReceiver()
    })
    after(async () => {
      await receiver.close()
      await database.drop()
    })

    test('a portal restarted in the middle of retries carries on with the next attempt, same webhook-id', async () => {
      const first = await startTestPortalOn(dialect, database, PACED)
      const project = await createProject(first)
      const endpoint = await createEndpoint(first, project.id, receiver.url('/restart/me'))
      receiver.answer('/restart/me', 'fail')
      const sent = await deliver(first, project.id, 'survives.restart', { n: 1 })
      await attemptsAtLeast(first, sent.deliveries[0].id, 2)
      await first.close()
      receiver.answer('/restart/me', 'ok')
      const callsWhileDown = receiver.callsTo('/restart/me').length

      const second = await startTestPortalOn(dialect, database, PACED)
      try {
        const delivery = await endedDelivery(second, sent.deliveries[0].id)
        assert.equal(delivery.status, 'succeeded')
        const numbers = delivery.attempts.map((a: any) => a.number)
        assert.deepEqual(numbers, numbers.map((_: number, i: number) => i + 1), 'attempt numbers run on without a gap or a repeat')
        const calls = receiver.callsTo('/restart/me')
        assert.equal(calls.length, delivery.attempts.length, 'every call is recorded as an attempt')
        assert.ok(calls.length > callsWhileDown)
        assert.ok(calls.every((call) => call.headers['webhook-id'] === sent.messageId))
        verifyCall(endpoint.secret, calls[calls.length - 1])
      } finally {
        await second.close()
      }
    })

    test('a portal stopped as it claims a delivery records that attempt before it stops', async () => {
      // Stopped the moment `deliver` answers, when the dispatcher's cycle is claiming the new delivery.
      // An attempt launched by that cycle and not recorded would keep its lease (timeout + 30 s) past a restart.
      for (let round = 0; round < 5; round++) {
        const first = await startTestPortalOn(dialect, database, PACED)
        const project = await createProject(first)
        await createEndpoint(first, project.id, receiver.url(`/stopped/${round}`))
        const sent = await deliver(first, project.id, 'stopped.while.claiming', { round })
        await first.close()
        const second = await startTestPortalOn(dialect, database, PACED)
        try {
          const delivery = await endedDelivery(second, sent.deliveries[0].id, 5_000)
          assert.equal(delivery.status, 'succeeded')
          assert.ok(delivery.attempts.every((a: any) => a.status !== 'interrupted'), JSON.stringify(delivery.attempts.map((a: any) => a.status)))
        } finally {
          await second.close()
        }
      }
    })

    test('a rotation in the middle of retries: later attempts carry both signatures, earlier ones keep their secret version', async () => {
      const t = await startTestPortalOn(dialect, database, PACED)
      try {
        const project = await createProject(t)
        const endpoint = await createEndpoint(t, project.id, receiver.url('/rotate/me'))
        receiver.answer('/rotate/me', 'fail')
        const sent = await deliver(t, project.id, 'rotates', {})
        await attemptsAtLeast(t, sent.deliveries[0].id, 1)
        const rotated = (await t.request('POST', `/api/webhooks/endpoints/${endpoint.id}/rotate`, { token: t.adminToken })).body
        // An attempt signed before the rotation may still be on its way: the receiver says ok only once one
        // signed after it has been made, so the success cannot be an old-secret attempt landing late.
        await eventually(async () => ((await readDelivery(t, sent.deliveries[0].id)).attempts.some((a: any) => a.secretId === rotated.secretId) ? true : undefined), 10_000, 'an attempt under the new secret')
        receiver.answer('/rotate/me', 'ok')
        const delivery = await endedDelivery(t, sent.deliveries[0].id)
        assert.equal(delivery.status, 'succeeded')
        const calls = receiver.callsTo('/rotate/me')
        const beforeRotation = delivery.attempts.filter((a: any) => a.secretId === endpoint.secretId)
        assert.ok(beforeRotation.length >= 1)
        assert.equal(delivery.attempts.at(-1).secretId, rotated.secretId)
        const last = calls[calls.length - 1]
        assert.equal(last.headers['webhook-signature'].split(' ').length, 2)
        verifyCall(rotated.secret, last)
        verifyCall(endpoint.secret, last)
        assert.throws(() => verifyCall(rotated.secret, calls[0]), 'the first attempt was signed before the new secret existed')
        verifyCall(endpoint.secret, calls[0])
        assert.ok(new Webhook(rotated.secret))
      } finally {
        await t.close()
      }
    })
  })
}

if (DIALECTS.includes('postgres')) {
  describe('two portal instances on one PostgreSQL database', () => {
    let database: TestDatabase
    let receiver: Receiver
    let instances: TestPortal[]
    before(async () => {
      database = await createTestDatabase('postgres', { migrated: true })
      receiver = await startReceiver()
      const env = { ...FAST_WEBHOOKS, WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05', WEBHOOK_TIMEOUT_MS: '5000' }
      instances = [await startTestPortalOn('postgres', database, env), await startTestPortalOn('postgres', database, env)]
    })
    after(async () => {
      for (const instance of instances) await instance.close()
      await receiver.close()
      await database.drop()
    })

    test('deliver nothing twice: each message reaches each endpoint once per attempt', async () => {
      const [a, b] = instances
      const project = await createProject(a)
      const endpoints = [await createEndpoint(a, project.id, receiver.url('/ok/one')), await createEndpoint(b, project.id, receiver.url('/ok/two'))]
      const failedOnce = new Set<string>()
      receiver.answer('/flaky', (call, response) => {
        const id = call.headers['webhook-id']
        if (failedOnce.has(id)) return response.writeHead(200).end()
        failedOnce.add(id)
        response.writeHead(503).end()
      })
      endpoints.push(await createEndpoint(b, project.id, receiver.url('/flaky')))
      const messages = 60
      const sent = await Promise.all(Array.from({ length: messages }, (_, i) => deliver(i % 2 ? a : b, project.id, 'shared.queue', { i })))
      const deliveries = sent.flatMap((s) => s.deliveries)
      assert.equal(deliveries.length, messages * 3)
      await eventually(async () => {
        const pending = await a.request('GET', `/api/webhooks/deliveries?project_id=${project.id}&status=pending&limit=1`, { token: a.viewerToken })
        return pending.body.data.length === 0 ? true : undefined
      }, 30_000, 'every delivery to end')

      // A call the receiver got but did not answer in time is retried by design (webhook-id lets it deduplicate);
      // what must never happen is an attempt made twice, or a call that is not a recorded attempt.
      const paths = ['/ok/one', '/ok/two', '/flaky']
      for (const s of sent) {
        for (const [i, d] of s.deliveries.entries()) {
          const delivery = await readDelivery(i % 2 ? a : b, d.id)
          const calls = receiver.callsTo(paths[endpoints.findIndex((e) => e.id === d.endpointId)]).filter((call) => call.headers['webhook-id'] === s.messageId)
          assert.equal(delivery.status, 'succeeded')
          assert.deepEqual(delivery.attempts.map((x: any) => x.number), calls.map((_, n) => n + 1), `${d.id}: ${calls.length} calls`)
        }
      }
      const flaky = receiver.callsTo('/flaky')
      assert.ok(flaky.length >= messages * 2, 'each flaky message: a failed attempt, then a retry')
      for (const call of flaky) verifyCall(endpoints[2].secret, call)
    })
  })
}
