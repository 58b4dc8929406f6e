import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { DIALECTS, createProject, createTestDatabase, event, ingest, readAll, requester, type PortalClient, type TestProject } from '../support/portal.ts'
import { freePort, killPortal, spawnPortal } from '../support/process.ts'

const ADMIN = `pat_${'d'.repeat(32)}`
// CRASH_ROUNDS=100 for the long run (docs/faults.md); the suite's default keeps it under a minute a store.
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 8)
const WRITERS = 4
const LOGS_PER_BATCH = 16
const ERRORS_PER_BATCH = 4
const ERROR_NAMES = ['TimeoutError', 'RangeError', 'PaymentDeclined']

/** One request as the client logs it: an ingest batch or an error capture, and what it carries. */
interface Sent {
  key: string
  route: '/api/ingest' | '/api/errors/capture'
  body: string
  logs: string[]
  /** error events in a batch, or the one captured exception */
  errors: { seq: string; name: string }[]
}

for (const dialect of DIALECTS) {
  describe(`crash durability on ${dialect}`, () => {
    test(`SIGKILL at random moments during concurrent ingest, ${ROUNDS} rounds: every acknowledged event, capture and error count is kept exactly`, { timeout: ROUNDS * 15_000 }, async (t) => {
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
      const client = { request: requester(portal.url), adminToken: ADMIN }
      try {
        const project = await createProject(client, 'crash')
        let sequence = 0
        // Two ingest batches (log and error events), then one capture, and so on.
        const newRequest = (): Sent => {
          const n = sequence++
          const name = ERROR_NAMES[n % ERROR_NAMES.length]
          if (n % 3 === 2) {
            const seq = `c${n}`
            return { key: randomUUID(), route: '/api/errors/capture', body: JSON.stringify({ name, message: 'the upstream did not answer', seq }), logs: [], errors: [{ seq, name }] }
          }
          const logs = Array.from({ length: LOGS_PER_BATCH }, (_, i) => `b${n}-log${i}`)
          const errors = Array.from({ length: ERRORS_PER_BATCH }, (_, i) => ({ seq: `b${n}-err${i}`, name: ERROR_NAMES[(n + i) % ERROR_NAMES.length] }))
          const events = [
            ...logs.map((message) => event('log', { message })),
            ...errors.map(({ seq, name }) => event('error', { name, message: 'the upstream did not answer', seq })),
          ]
          return { key: randomUUID(), route: '/api/ingest', body: JSON.stringify({ events }), logs, errors }
        }

        const acknowledged: Sent[] = []
        let unacknowledged: Sent[] = []
        let replayed = 0
        /** Sends one request; true when the portal acknowledged it (first time or replayed). */
        const send = async (sent: Sent) => {
          const headers = { 'x-service-idempotency-key': sent.key }
          let response
          try {
            response =
              sent.route === '/api/ingest'
                ? await ingest(client, project, sent.body, headers)
                : await client.request('POST', sent.route, { token: project.key, body: sent.body, headers })
          } catch {
            return false // the portal died with the request in flight: the client cannot know whether it was stored
          }
          // Shed (a restart that applied a crash's outbox can hold the event loop past the shedding limit on a loaded
          // machine): nothing was stored, and the client retries with the same key, as an SDK does on 503.
          if (response.status === 503 && response.body?.code === 'overloaded') return false
          if (sent.route === '/api/ingest') {
            assert.equal(response.status, 200, response.text)
            assert.equal(response.body.accepted, LOGS_PER_BATCH + ERRORS_PER_BATCH)
          } else {
            assert.equal(response.status, 201, response.text)
          }
          if (response.headers.get('idempotent-replayed') === 'true') replayed++
          return true
        }

        for (let round = 0; round < ROUNDS; round++) {
          let stop = false
          // Retries of what was in flight at the last kill come first, with their own keys, as an SDK would do.
          const writer = async () => {
            while (!stop) {
              const sent = unacknowledged.shift() ?? newRequest()
              if (await send(sent)) acknowledged.push(sent)
              else return void unacknowledged.push(sent)
            }
          }
          const writers = Array.from({ length: WRITERS }, writer)
          await sleep(100 + Math.random() * 900)
          await killPortal(portal)
          stop = true
          await Promise.all(writers)
          portal = await spawnPortal(env)
        }
        for (const sent of unacknowledged.splice(0)) {
          let stored = false
          for (let attempt = 0; attempt < 20 && !stored; attempt++) stored = (await send(sent)) || (await sleep(1000), false)
          assert.ok(stored, 'a retry after the last restart is acknowledged')
          acknowledged.push(sent)
        }
        const captures = acknowledged.filter((sent) => sent.route === '/api/errors/capture').length
        t.diagnostic(
          `${dialect}: ${acknowledged.length - captures} batches and ${captures} captures acknowledged over ${ROUNDS} kills; ` +
            `${replayed} retries were replays of requests stored before a kill`,
        )
        assert.ok(acknowledged.length > ROUNDS * WRITERS, `only ${acknowledged.length} requests were acknowledged`)

        const storedLogs = (await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)).map((e) => e.data.message)
        assert.deepEqual(storedLogs.sort(), acknowledged.flatMap((sent) => sent.logs).sort(), 'every acknowledged log event is stored once')

        const ingested = acknowledged.filter((sent) => sent.route === '/api/ingest')
        const storedErrors = (await readAll(client, `/api/errors/events?project_id=${project.id}`)).map((e) => e.data.seq)
        const expectedErrors = ingested.flatMap((sent) => sent.errors.map((error) => error.seq))
        assert.deepEqual(storedErrors.sort(), expectedErrors.sort(), 'every acknowledged error event is stored once')
        await assertGroupCounts(client, project, acknowledged.flatMap((sent) => sent.errors))
      } finally {
        await killPortal(portal)
        await database.drop()
      }
    })
  })
}

/** Each error group's count is exactly the number of acknowledged occurrences of its error, captured or ingested. */
async function assertGroupCounts(client: PortalClient, project: TestProject, expected: { name: string }[]) {
  const groups = await readAll(client, `/api/errors/groups?project_id=${project.id}`)
  const counts = Object.fromEntries(groups.map((group) => [group.name, group.count]))
  const expectedCounts: Record<string, number> = {}
  for (const { name } of expected) expectedCounts[name] = (expectedCounts[name] ?? 0) + 1
  assert.deepEqual(counts, expectedCounts, 'error group counts equal the acknowledged occurrences')
}
