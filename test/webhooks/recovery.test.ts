import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, startTestPortal, type TestPortal } from '../support/portal.ts'
import { createEndpoint, deliver, endedDelivery, FAST_WEBHOOKS, readDelivery } from './api.ts'
import { eventually, startReceiver, type Receiver } from './receiver.ts'

// A retry schedule an hour long: nothing is attempted again by itself while a test runs.
const SLOW_RETRIES = { ...FAST_WEBHOOKS, WEBHOOK_RETRY_SCHEDULE: '3600,3600' }

for (const dialect of DIALECTS) {
  describe(`webhook recovery by hand on ${dialect}`, () => {
    let t: TestPortal
    let receiver: Receiver
    before(async () => {
      t = await startTestPortal(dialect, SLOW_RETRIES)
      receiver = await startReceiver()
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    /** A delivery to `path` whose first attempt failed: pending, its next attempt an hour away. */
    async function waitingDelivery(path: string) {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url(path))
      receiver.answer(path, 'fail')
      const sent = await deliver(t, project.id, 'order.created', { n: 1 })
      const id = sent.deliveries[0].id
      await eventually(async () => ((await readDelivery(t, id)).attempts[0]?.status === 'failed' ? true : undefined), 10_000, 'the first attempt to fail')
      const delivery = await readDelivery(t, id)
      assert.equal(delivery.status, 'pending')
      assert.ok(Date.parse(delivery.nextAttemptAt) > Date.now() + 600_000, `next attempt at ${delivery.nextAttemptAt}`)
      return { project, endpoint, id }
    }

    test('Retry now sends a pending delivery’s next attempt at once, not at its scheduled time', async () => {
      const { id } = await waitingDelivery('/pending/retry')
      receiver.answer('/pending/retry', 'ok')
      const retried = await t.request('POST', `/api/webhooks/deliveries/${id}/retry`, { token: t.adminToken })
      assert.equal(retried.status, 202, retried.text)
      const delivery = await endedDelivery(t, id)
      assert.deepEqual([delivery.status, delivery.attempts.map((a: any) => [a.number, a.status])], ['succeeded', [[1, 'failed'], [2, 'succeeded']]])
    })

    test('recover since a time sends the endpoint’s pending deliveries now and its failed ones again', async () => {
      const { endpoint, id } = await waitingDelivery('/pending/recover')
      receiver.answer('/pending/recover', 'ok')
      const recovered = await t.request('POST', `/api/webhooks/endpoints/${endpoint.id}/recover`, { token: t.adminToken, body: { since: new Date(Date.now() - 3_600_000).toISOString() } })
      assert.equal(recovered.status, 202, recovered.text)
      assert.deepEqual(recovered.body.deliveries.map((d: any) => d.id), [id])
      assert.equal((await endedDelivery(t, id)).status, 'succeeded')
    })

    test('disabling an endpoint keeps its pending deliveries waiting; enabling it sends them at once', async () => {
      const { project, endpoint, id } = await waitingDelivery('/paused')
      const disabled = await t.request('PATCH', `/api/webhooks/endpoints/${endpoint.id}`, { token: t.adminToken, body: { enabled: false } })
      assert.equal(disabled.status, 200, disabled.text)
      assert.equal((await readDelivery(t, id)).status, 'pending', 'waiting, not failed')
      const refused = await t.request('POST', `/api/webhooks/deliveries/${id}/retry`, { token: t.adminToken })
      assert.deepEqual([refused.status, refused.body.code], [409, 'endpoint_disabled'])
      const meanwhile = await deliver(t, project.id, 'order.created', { n: 2 })
      assert.deepEqual(meanwhile.deliveries, [], 'no new message is queued for a paused endpoint')
      receiver.answer('/paused', 'ok')
      const calls = receiver.callsTo('/paused').length
      const enabled = await t.request('PATCH', `/api/webhooks/endpoints/${endpoint.id}`, { token: t.adminToken, body: { enabled: true } })
      assert.equal(enabled.status, 200, enabled.text)
      const delivery = await endedDelivery(t, id)
      assert.deepEqual([delivery.status, delivery.attempts.length, receiver.callsTo('/paused').length], ['succeeded', 2, calls + 1])
    })

    test('deleting an endpoint still fails its pending deliveries', async () => {
      const { endpoint, id } = await waitingDelivery('/deleted')
      const deleted = await t.request('DELETE', `/api/webhooks/endpoints/${endpoint.id}`, { token: t.adminToken })
      assert.equal(deleted.status, 204)
      assert.equal((await readDelivery(t, id)).status, 'failed')
    })
  })
}
