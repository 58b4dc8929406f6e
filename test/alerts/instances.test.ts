import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, createTestDatabase, DIALECTS, event, ingest, readAll, requester, type PortalClient } from '../support/portal.ts'
import { killPortal, spawnPortal, type PortalProcess } from '../support/process.ts'
import { eventually, startReceiver } from '../webhooks/receiver.ts'

const ADMIN = `pat_${'a'.repeat(32)}`
const INSTANCES = 3
const RULES = 5
const ROUNDS = 4
// a delivery whose sender died is taken over once its lease (timeout + 30 s) runs out
const ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2', PORTAL_BOOTSTRAP_TOKEN: ADMIN, LOG_LEVEL: 'error' }

if (DIALECTS.includes('postgres')) {
  describe(`alerts on ${INSTANCES} portal processes sharing PostgreSQL, with SIGKILLs`, () => {
    test('every transition is recorded once and its notification reaches the receiver exactly once (by webhook-id)', { timeout: 300_000 }, async () => {
      const database = await createTestDatabase('postgres', { migrated: true })
      const receiver = await startReceiver()
      // In a delivery round, the first call is held and every portal killed while it is: the attempt in flight dies
      // with its sender, and another portal retries it once the lease runs out. Other calls take a while, so that
      // kills of an evaluation round can land while deliveries are in flight too.
      let onFirstCall: (() => void) | undefined
      receiver.answer('/alerts', (_call, response) => {
        const hold = onFirstCall
        onFirstCall = undefined
        if (hold) return hold()
        setTimeout(() => response.writeHead(200).end(), 150)
      })
      const env = { ...ENV, DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir }
      const portals: PortalProcess[] = []
      try {
        for (let i = 0; i < INSTANCES; i++) portals.push(await spawnPortal(env, { timeoutMs: 120_000 }))
        const live = () => portals.find((portal) => portal.child.exitCode === null && portal.child.signalCode === null)!
        const client = (): PortalClient => ({ request: requester(live().url), adminToken: ADMIN })
        const project = await createProject(client())
        const endpoint = await client().request('POST', '/api/webhooks/endpoints', { token: ADMIN, body: { projectId: project.id, url: receiver.url('/alerts'), eventTypes: ['alert.firing', 'alert.resolved'] } })
        assert.equal(endpoint.status, 201, endpoint.text)
        assert.equal((await ingest(client(), project, Array.from({ length: 3 }, (_, i) => event('log', { message: `failed ${i}`, level: 'error' })))).status, 200)
        const definition = (i: number, critical: number) => ({
          name: `rule ${i}`,
          signal: 'logs.count',
          filters: { level: 'error' },
          windowSeconds: 3600,
          intervalSeconds: 10,
          condition: { op: 'above', critical },
          targets: { endpointIds: [endpoint.body.id] },
        })
        const rules: string[] = []
        for (let i = 0; i < RULES; i++) {
          const created = await client().request('POST', '/api/alerts/rules', { token: ADMIN, body: { projectId: project.id, ...definition(i, 1000) } })
          assert.equal(created.status, 201, created.text)
          rules.push(created.body.id)
        }
        let kills = 0
        for (let round = 0; round < ROUNDS; round++) {
          // Even rounds cross the threshold (3 logs > 2): firing; odd rounds raise it: resolved.
          const critical = round % 2 === 0 ? 2 : 1000
          const duringDelivery = round % 2 === 1
          const firstCall = new Promise<void>((resolve) => (onFirstCall = duringDelivery ? resolve : undefined))
          for (const [i, id] of rules.entries()) {
            const res = await client().request('PUT', `/api/alerts/rules/${id}`, { token: ADMIN, body: definition(i, critical) })
            assert.equal(res.status, 200, res.text)
            await client().request('POST', `/api/alerts/rules/${id}/evaluate`, { token: ADMIN })
          }
          if (duringDelivery) {
            // every portal dies while the first notification of the round is at the receiver
            await firstCall
            for (const portal of portals) await killPortal(portal)
            kills += INSTANCES
            for (let i = 0; i < INSTANCES; i++) portals[i] = await spawnPortal(env, { timeoutMs: 120_000 })
          } else {
            // one portal dies while the rules are being evaluated, their claims taken
            const victim = (round / 2) % INSTANCES
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 300))
            await killPortal(portals[victim])
            kills++
            portals[victim] = await spawnPortal(env, { timeoutMs: 120_000 })
          }
          const expected = round % 2 === 0 ? 'firing' : 'resolved'
          await eventually(
            async () => {
              const states = await Promise.all(rules.map(async (id) => (await client().request('GET', `/api/alerts/rules/${id}/instances`, { token: ADMIN })).body.data[0]?.state))
              if (states.every((state) => state === expected)) return true
              // a claim lost with a killed instance is taken again at the next interval; asking again does it now
              for (const id of rules) await client().request('POST', `/api/alerts/rules/${id}/evaluate`, { token: ADMIN })
              await new Promise((resolve) => setTimeout(resolve, 500))
              return undefined
            },
            60_000,
            `every rule ${expected} in round ${round}`,
          )
        }
        const history = await readAll(client(), `/api/alerts/history?project_id=${project.id}`)
        for (const id of rules) {
          const own = history.filter((row) => row.ruleId === id).reverse()
          assert.deepEqual(own.map((row) => `${row.from}→${row.to}`), ['ok→firing', 'firing→resolved', 'resolved→firing', 'firing→resolved'], `rule ${id}: one transition per change, however many portals evaluated it`)
        }
        const messageIds = new Set(history.map((row) => row.messageId))
        assert.equal(messageIds.size, RULES * ROUNDS, 'each transition has its own message')
        assert.ok(!messageIds.has(null))
        // Every delivery ends; the one held when its sender died is retried once its lease (timeout + 30 s) runs out.
        await eventually(
          async () => ((await readAll(client(), `/api/webhooks/deliveries?project_id=${project.id}&status=pending`)).length === 0 ? true : undefined),
          120_000,
          'every delivery to end',
        )
        const received = new Set(receiver.callsTo('/alerts').map((call) => call.headers['webhook-id']))
        assert.deepEqual([...received].sort(), [...messageIds].sort(), 'the receiver got exactly the notifications of the transitions, each once by webhook-id')
        const deliveries = await readAll(client(), `/api/webhooks/deliveries?project_id=${project.id}`)
        assert.equal(deliveries.length, RULES * ROUNDS, 'one delivery per transition')
        assert.deepEqual([...new Set(deliveries.map((delivery) => delivery.status))], ['succeeded'])
        const redelivered = receiver.callsTo('/alerts').length - received.size
        assert.ok(redelivered >= 1, 'an attempt cut off by the kill was made again: the kills landed during delivery')
        console.log(`${kills} SIGKILLs; ${receiver.callsTo('/alerts').length} calls for ${received.size} notifications (${redelivered} retried after an interrupted attempt, same webhook-id)`)
      } finally {
        for (const portal of portals) await killPortal(portal)
        await receiver.close()
        await database.drop()
      }
    })
  })
}
