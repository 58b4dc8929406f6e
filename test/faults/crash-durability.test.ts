import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { DIALECTS, createProject, createTestDatabase, event, ingest, portalClient, readAll, type TestProject } from '../support/portal.ts'
import { freePort, killPortal, spawnPortal } from '../support/process.ts'

const ADMIN = `pat_${'d'.repeat(32)}`
const ROUNDS = 8
const WRITERS = 4
const LOGS_PER_BATCH = 16
const ERRORS_PER_BATCH = 4
const ERROR_NAMES = ['TimeoutError', 'RangeError', 'PaymentDeclined']

/** One ingest request as the client logs it: what it sent, under which key, and whether a 200 came back. */
interface Batch {
  key: string
  body: string
  logs: string[]
  errors: { seq: string; name: string }[]
}

for (const dialect of DIALECTS) {
  describe(`crash durability on ${dialect}`, () => {
    test(`SIGKILL at random moments during concurrent ingest, ${ROUNDS} rounds: every acknowledged event and error count is kept exactly`, { timeout: 120_000 }, async (t) => {
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
      // The port stays the same across restarts, so one client serves every incarnation.
      const client = portalClient(portal.url, ADMIN)
      try {
        const project = await createProject(client, 'crash')
        let sequence = 0
        const newBatch = (): Batch => {
          const batch = sequence++
          const logs = Array.from({ length: LOGS_PER_BATCH }, (_, i) => `b${batch}-log${i}`)
          const errors = Array.from({ length: ERRORS_PER_BATCH }, (_, i) => ({ seq: `b${batch}-err${i}`, name: ERROR_NAMES[(batch + i) % ERROR_NAMES.length] }))
          const events = [
            ...logs.map((message) => event('log', { message })),
            ...errors.map(({ seq, name }) => event('error', { name, message: 'the upstream did not answer', seq })),
          ]
          return { key: randomUUID(), body: JSON.stringify({ events }), logs, errors }
        }

        const acknowledged: Batch[] = []
        let unacknowledged: Batch[] = []
        let replayed = 0
        /** Sends one batch; true when the portal acknowledged it (a 200, first time or replayed). */
        const send = async (batch: Batch) => {
          let response
          try {
            response = await ingest(client, project, batch.body, { 'x-service-idempotency-key': batch.key })
          } catch {
            return false // the portal died with the request in flight: the client cannot know whether it was stored
          }
          assert.equal(response.status, 200, response.text)
          assert.equal(response.body.accepted, LOGS_PER_BATCH + ERRORS_PER_BATCH)
          if (response.headers.get('idempotent-replayed') === 'true') replayed++
          return true
        }

        for (let round = 0; round < ROUNDS; round++) {
          let stop = false
          // Retries of what was in flight at the last kill come first, with their own keys, as an SDK would do.
          const writer = async () => {
            while (!stop) {
              const batch = unacknowledged.shift() ?? newBatch()
              if (await send(batch)) acknowledged.push(batch)
              else return void unacknowledged.push(batch)
            }
          }
          const writers = Array.from({ length: WRITERS }, writer)
          await sleep(100 + Math.random() * 900)
          await killPortal(portal)
          stop = true
          await Promise.all(writers)
          portal = await spawnPortal(env)
        }
        for (const batch of unacknowledged.splice(0)) {
          assert.ok(await send(batch), 'a retry after the last restart is acknowledged')
          acknowledged.push(batch)
        }
        t.diagnostic(`${dialect}: ${acknowledged.length} batches acknowledged over ${ROUNDS} kills; ${replayed} retries were replays of batches stored before a kill`)
        assert.ok(acknowledged.length > ROUNDS * WRITERS, `only ${acknowledged.length} batches were acknowledged`)

        const storedLogs = (await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)).map((e) => e.data.message)
        assert.deepEqual(storedLogs.sort(), acknowledged.flatMap((batch) => batch.logs).sort(), 'every acknowledged log event is stored once')

        const expectedErrors = acknowledged.flatMap((batch) => batch.errors)
        const storedErrors = (await readAll(client, `/api/errors/events?project_id=${project.id}`)).map((e) => e.data.seq)
        assert.deepEqual(storedErrors.sort(), expectedErrors.map((error) => error.seq).sort(), 'every acknowledged error event is stored once')
        await assertGroupCounts(client, project, expectedErrors)
      } finally {
        await killPortal(portal)
        await database.drop()
      }
    })
  })
}

/** Each error group's count is exactly the number of acknowledged occurrences of its error. */
async function assertGroupCounts(client: ReturnType<typeof portalClient>, project: TestProject, expected: { name: string }[]) {
  const groups = await readAll(client, `/api/errors/groups?project_id=${project.id}`)
  const counts = Object.fromEntries(groups.map((group) => [group.name, group.count]))
  const expectedCounts: Record<string, number> = {}
  for (const { name } of expected) expectedCounts[name] = (expectedCounts[name] ?? 0) + 1
  assert.deepEqual(counts, expectedCounts, 'error group counts equal the acknowledged occurrences')
}
