import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, createTestDatabase, DIALECTS, requester, startTestPortalOn } from '../support/portal.ts'
import { killPortal, spawnPortal } from '../support/process.ts'
import { createEndpoint, deliver, readDelivery } from '../webhooks/api.ts'
import { eventually, startReceiver } from '../webhooks/receiver.ts'

const ADMIN = `pat_${'k'.repeat(32)}`
const MESSAGES = 4
// the lease of an attempt is WEBHOOK_TIMEOUT_MS and a 30 s margin: the wait before a crashed attempt is taken over
const WEBHOOKS = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_SCHEDULE: '0.1,0.1' }

for (const dialect of DIALECTS) {
  describe(`a portal killed in the middle of webhook attempts, on ${dialect}`, () => {
    test('its attempts show in_progress, then interrupted and counted, and the next attempt follows: one call, one attempt', { timeout: 120_000 }, async () => {
      const database = await createTestDatabase(dialect)
      const receiver = await startReceiver()
      const held = new Set<string>()
      // The first call of each message is held until the sender dies; later calls succeed.
      receiver.answer('/first-held', (call, response) => {
        if (held.has(call.headers['webhook-id'])) return void response.writeHead(200).end()
        held.add(call.headers['webhook-id'])
      })
      const crashing = await spawnPortal({ ...WEBHOOKS, DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN }, { timeoutMs: 90_000 })
      try {
        const client = { request: requester(crashing.url), adminToken: ADMIN }
        const project = await createProject(client)
        await createEndpoint(client as never, project.id, receiver.url('/first-held'))
        const sent = []
        for (let i = 0; i < MESSAGES; i++) sent.push(await deliver(client as never, project.id, 'crash.me', { i }))
        await eventually(() => (receiver.callsTo('/first-held').length === MESSAGES ? true : undefined), 10_000, 'every first call')
        await killPortal(crashing)

        const survivor = await startTestPortalOn(dialect, database, WEBHOOKS)
        try {
          for (const { deliveries } of sent) {
            const delivery = await readDelivery(survivor, deliveries[0].id)
            assert.deepEqual(delivery.attempts.map((a: any) => [a.number, a.status]), [[1, 'in_progress']], 'the attempt the killed portal made is in the history')
          }
          for (const { messageId, deliveries } of sent) {
            const delivery = await eventually(async () => {
              const read = await readDelivery(survivor, deliveries[0].id)
              return read.status === 'pending' ? undefined : read
            }, 60_000, `delivery ${deliveries[0].id} to end after the lease ran out`)
            assert.equal(delivery.status, 'succeeded')
            assert.deepEqual(delivery.attempts.map((a: any) => [a.number, a.status]), [[1, 'interrupted'], [2, 'succeeded']])
            assert.match(delivery.attempts[0].error, /stopped before recording an outcome/)
            assert.equal(delivery.attemptCount, 2)
            const calls = receiver.callsTo('/first-held').filter((call) => call.headers['webhook-id'] === messageId)
            assert.equal(calls.length, delivery.attempts.length, 'every call the receiver got is an attempt in the history')
          }
        } finally {
          await survivor.close()
        }
      } finally {
        await killPortal(crashing)
        await receiver.close()
        await database.drop()
      }
    })
  })
}
