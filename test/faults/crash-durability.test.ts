import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { hmacSha256Hex } from '../../src/identity/secrets.ts'
import { DIALECTS, createTestDatabase } from '../support/portal.ts'
import { freePort, killPortal, spawnPortal, type PortalProcess } from '../support/process.ts'

const ADMIN = `pat_${'d'.repeat(32)}`
const ROUNDS = 3
const EVENTS_PER_BATCH = 20

interface Batch {
  key: string
  body: string
  messages: string[]
}

for (const dialect of DIALECTS) {
  describe(`crash durability on ${dialect}`, () => {
    test(`SIGKILL during ingest, ${ROUNDS} rounds: every acknowledged event is kept, none is stored twice`, { timeout: 180_000 }, async () => {
      const database = await createTestDatabase(dialect)
      const env = {
        DATABASE_URL: database.url,
        PORTAL_DATA_DIR: database.dataDir,
        PORTAL_BOOTSTRAP_TOKEN: ADMIN,
        PORT: String(await freePort()),
        INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000',
        INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000',
      }
      let portal = await spawnPortal(env)
      try {
        const api = (path: string, init: RequestInit = {}) =>
          fetch(portal.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...init.headers } })
        const project = await (await api('/api/projects', { method: 'POST', body: JSON.stringify({ name: 'crash' }) })).json()
        const key = await (await api(`/api/projects/${project.id}/keys`, { method: 'POST', body: '{}' })).json()

        let sequence = 0
        const newBatch = (): Batch => {
          const messages = Array.from({ length: EVENTS_PER_BATCH }, (_, i) => `b${sequence}-e${i}`)
          sequence++
          const events = messages.map((message) => ({ type: 'log', ts: new Date().toISOString(), data: { message } }))
          return { key: randomUUID(), body: JSON.stringify({ events }), messages }
        }
        const send = async (target: PortalProcess, batch: Batch) => {
          const response = await fetch(`${target.url}/api/ingest`, {
            method: 'POST',
            body: batch.body,
            headers: {
              authorization: `Bearer ${key.key}`,
              'content-type': 'application/json',
              'x-service-signature': hmacSha256Hex(key.webhookSecret, batch.body),
              'x-service-idempotency-key': batch.key,
            },
          })
          if (response.status !== 200) throw new Error(`status ${response.status}`)
          const body = await response.json()
          assert.equal(body.accepted, EVENTS_PER_BATCH)
        }

        const acknowledged: Batch[] = []
        let unacknowledged: Batch[] = []
        for (let round = 0; round < ROUNDS; round++) {
          const target = portal
          let stop = false
          const writer = async () => {
            while (!stop) {
              const batch = unacknowledged.shift() ?? newBatch()
              try {
                await send(target, batch)
                acknowledged.push(batch)
              } catch {
                unacknowledged.push(batch)
                return
              }
            }
          }
          const writers = Array.from({ length: 4 }, writer)
          await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700))
          await killPortal(portal)
          stop = true
          await Promise.all(writers)
          portal = await spawnPortal(env)
        }
        // Retry what was in flight at the kills with the same idempotency keys, as an SDK would.
        for (const batch of unacknowledged) {
          await send(portal, batch)
          acknowledged.push(batch)
        }
        assert.ok(acknowledged.length > ROUNDS, `only ${acknowledged.length} batches were acknowledged`)

        const stored: string[] = []
        let cursor: string | null = null
        do {
          const page: any = await (await api(`/api/modules/logs/events?project_id=${project.id}&limit=500${cursor ? `&cursor=${cursor}` : ''}`)).json()
          stored.push(...page.data.map((e: any) => e.data.message))
          cursor = page.nextCursor
        } while (cursor)
        const expected = acknowledged.flatMap((batch) => batch.messages)
        assert.equal(stored.length, expected.length, 'no event lost and none stored twice')
        assert.deepEqual(new Set(stored), new Set(expected))
      } finally {
        await killPortal(portal)
        await database.drop()
      }
    })
  })
}
