import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, startTestPortal, type TestPortal } from '../support/portal.ts'
import { createEndpoint, deliver, endedDelivery, FAST_WEBHOOKS } from './api.ts'
import { startReceiver, type Receiver } from './receiver.ts'

for (const dialect of DIALECTS) {
  describe(`webhook SSRF guard on ${dialect}`, () => {
    let t: TestPortal
    let receiver: Receiver
    before(async () => {
      t = await startTestPortal(dialect, { ...FAST_WEBHOOKS, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_RETRY_SCHEDULE: '0.05' })
      receiver = await startReceiver()
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    test('loopback, private, link-local and mapped addresses are refused, by IP literal or by DNS answer', async () => {
      const port = new URL(receiver.base).port
      const targets = [
        `http://127.0.0.1:${port}/ok`,
        `http://localhost:${port}/ok`,
        `http://[::1]:${port}/ok`,
        `http://[::ffff:127.0.0.1]:${port}/ok`,
        `http://[::ffff:7f00:1]:${port}/ok`,
        `http://[64:ff9b::7f00:1]:${port}/ok`,
        `http://10.1.2.3:${port}/ok`,
        `http://169.254.169.254/latest/meta-data`,
        `http://0.0.0.0:${port}/ok`,
        `http://2130706433:${port}/ok`,
      ]
      const project = await createProject(t)
      for (const url of targets) await createEndpoint(t, project.id, url)
      const sent = await deliver(t, project.id, 'probe', {})
      assert.equal(sent.deliveries.length, targets.length)
      for (const { id } of sent.deliveries) {
        const delivery = await endedDelivery(t, id)
        assert.equal(delivery.status, 'failed')
        assert.deepEqual(delivery.attempts.map((a: any) => a.status), ['refused', 'refused'], `${delivery.endpointId}: ${delivery.attempts[0].error}`)
        assert.match(delivery.attempts[0].error, /loopback|private|reserved/)
      }
      assert.equal(receiver.calls.length, 0, 'nothing reached the loopback receiver')
    })

    test('a public address passes the guard (the attempt then fails on the network, not as refused)', async () => {
      const project = await createProject(t)
      // 192.0.2.1 (TEST-NET-1) is outside every refused range and routes nowhere.
      await createEndpoint(t, project.id, 'http://192.0.2.1/hook')
      const sent = await deliver(t, project.id, 'probe', {})
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.ok(delivery.attempts.every((a: any) => a.status === 'timeout' || a.status === 'network_error'), JSON.stringify(delivery.attempts.map((a: any) => a.error)))
    })
  })
}
