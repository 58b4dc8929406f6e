import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, startTestPortal, type TestPortal } from '../support/portal.ts'
import { createEndpoint, deliver, endedDelivery, FAST_WEBHOOKS } from './api.ts'
import { startReceiver, type Receiver } from './receiver.ts'

// What the endpoints and deliveries lists need to say whether an endpoint works, without a read per row.
for (const dialect of DIALECTS) {
  describe(`webhook endpoint health and delivery context on ${dialect}`, () => {
    let t: TestPortal
    let receiver: Receiver
    before(async () => {
      t = await startTestPortal(dialect, FAST_WEBHOOKS)
      receiver = await startReceiver()
    })
    after(async () => {
      await t?.close()
      await receiver?.close()
    })

    test('per endpoint: attempts, success rate and the latest status; deliveries carry the endpoint URL and last response code', async () => {
      const project = await createProject(t)
      const healthy = await createEndpoint(t, project.id, receiver.url('/ok/health'))
      const broken = await createEndpoint(t, project.id, receiver.url('/fail/500'))
      const idle = await createEndpoint(t, project.id, receiver.url('/ok/idle'), { eventTypes: ['never.sent'] })
      const sent = await deliver(t, project.id, 'order.created', { n: 1 }, [healthy.id, broken.id])
      for (const delivery of sent.deliveries) await endedDelivery(t, delivery.id)

      const health = await t.request('GET', `/api/webhooks/endpoint-health?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(health.status, 200, health.text)
      const byEndpoint = new Map(health.body.data.map((row: any) => [row.endpointId, row]))
      assert.equal(byEndpoint.has(idle.id), false)
      assert.deepEqual(
        ((({ lastAttemptAt, ...row }) => row)(byEndpoint.get(healthy.id) as any)),
        { endpointId: healthy.id, attempts: 1, succeeded: 1, successRate: 1, lastAttemptStatus: 'succeeded', lastStatusCode: 200 },
      )
      assert.deepEqual(
        ((({ lastAttemptAt, ...row }) => row)(byEndpoint.get(broken.id) as any)),
        { endpointId: broken.id, attempts: 3, succeeded: 0, successRate: 0, lastAttemptStatus: 'failed', lastStatusCode: 500 },
      )
      const endpoint = await t.request('GET', `/api/webhooks/endpoints/${broken.id}`, { token: t.viewerToken })
      assert.notEqual(endpoint.body.failingSince, null)

      const later = await t.request('GET', `/api/webhooks/endpoint-health?project_id=${project.id}&from=${new Date(Date.now() + 60_000).toISOString()}`, { token: t.viewerToken })
      assert.deepEqual(later.body, { data: [] })

      const deliveries = await t.request('GET', `/api/webhooks/deliveries?project_id=${project.id}`, { token: t.viewerToken })
      const rows = new Map(deliveries.body.data.map((row: any) => [row.endpointId, [row.endpointUrl, row.lastStatusCode]]))
      assert.deepEqual(rows.get(healthy.id), [receiver.url('/ok/health'), 200])
      assert.deepEqual(rows.get(broken.id), [receiver.url('/fail/500'), 500])
      const detail = await t.request('GET', `/api/webhooks/deliveries/${sent.deliveries.find((d) => d.endpointId === broken.id)!.id}`, { token: t.viewerToken })
      assert.equal(detail.body.endpointUrl, receiver.url('/fail/500'))
      assert.equal(detail.body.lastStatusCode, 500)
    })

    test('a project of another organisation or a bad time is refused', async () => {
      const project = await createProject(t)
      const bad = await t.request('GET', `/api/webhooks/endpoint-health?project_id=${project.id}&from=yesterday`, { token: t.viewerToken })
      assert.equal(bad.status, 400)
      assert.match(bad.body.detail, /from/)
      const unknown = await t.request('GET', `/api/webhooks/endpoint-health?project_id=prj_nope`, { token: t.viewerToken })
      assert.equal(unknown.status, 404)
    })
  })
}
