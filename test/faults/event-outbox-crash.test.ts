import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { DIALECTS, createProject, createTestDatabase, event, ingest, readAll, requester } from '../support/portal.ts'
import { freePort, killPortal, spawnPortal, type PortalProcess } from '../support/process.ts'

// The two-store path of docs/event-store.md: on SQLite the log events go through the outbox into
// DuckDB, and the portal is killed at each point of the materialiser (the test-only hook
// PORTAL_TEST_CRASH_IN_MATERIALISER makes it SIGKILL itself there). On PostgreSQL an ingest is one
// transaction: the same steps check that path, with the kill coming from outside.
const ADMIN = `pat_${'e'.repeat(32)}`
const LOGS_PER_BATCH = 50
const CRASH_POINTS = ['before-duckdb-commit', 'after-duckdb-commit'] as const

for (const dialect of DIALECTS) {
  describe(`event outbox crash recovery on ${dialect}`, () => {
    // On PostgreSQL there is no materialiser: one case, killed from outside after its batches.
    for (const point of dialect === 'sqlite' ? CRASH_POINTS : CRASH_POINTS.slice(0, 1)) {
      test(`SIGKILL ${dialect === 'sqlite' ? point.replace(/-/g, ' ') : 'after acknowledged ingests'}: every acknowledged log is stored once`, { timeout: 300_000 }, async (t) => {
        const database = await createTestDatabase(dialect)
        const env: Record<string, string> = {
          DATABASE_URL: database.url,
          PORTAL_DATA_DIR: database.dataDir,
          PORTAL_BOOTSTRAP_TOKEN: ADMIN,
          PORT: String(await freePort()),
          EVENT_STORE: dialect === 'sqlite' ? 'duckdb' : 'sqlite',
          INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000',
          INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000',
        }
        // Creating the project writes audit events, which go through the outbox too: made by a portal of their
        // own, and applied (a read of them passes their barrier) before it stops, so that the crash comes with the logs.
        let portal: PortalProcess = await spawnPortal(env)
        const client = { request: requester(portal.url), adminToken: ADMIN }
        try {
          const project = await createProject(client, 'outbox crash')
          assert.equal((await client.request('GET', `/api/modules/audit/events?project_id=${project.id}`, { token: ADMIN })).status, 200)
          await killPortal(portal, 'SIGTERM')
          // The materialiser kills this portal at `point` the first time it applies the outbox.
          portal = await spawnPortal({ ...env, PORTAL_TEST_CRASH_IN_MATERIALISER: point })
          const acknowledged: string[] = []
          const unacknowledged: { key: string; logs: string[] }[] = []
          let died = false
          for (let batch = 0; !died && batch < (dialect === 'sqlite' ? 400 : 10); batch++) {
            const logs = Array.from({ length: LOGS_PER_BATCH }, (_, i) => `${point}-b${batch}-log${i}`)
            const key = randomUUID()
            try {
              const response = await ingest(client, project, JSON.stringify({ events: logs.map((message) => event('log', { message })) }), { 'x-service-idempotency-key': key })
              assert.equal(response.status, 200, response.text)
              acknowledged.push(...logs)
            } catch {
              died = true // the portal died with the request in flight: the client retries it below
              unacknowledged.push({ key, logs })
            }
            // A read makes the materialiser apply what is acknowledged so far (the read barrier), and so crash.
            if (!died && batch % 5 === 4) died = (await client.request('GET', `/api/modules/logs/events?project_id=${project.id}&limit=1`, { token: ADMIN }).catch(() => null)) === null
          }
          if (dialect === 'sqlite') assert.ok(died, 'the materialiser reached the crash point')
          t.diagnostic(`died=${died} acknowledged=${acknowledged.length}`)
          await killPortal(portal)
          assert.ok(acknowledged.length > 0, 'some batches were acknowledged before the kill')

          portal = await spawnPortal(env)
          t.diagnostic('restarted')
          for (const { key, logs } of unacknowledged) {
            const response = await ingest(client, project, JSON.stringify({ events: logs.map((message) => event('log', { message })) }), { 'x-service-idempotency-key': key })
            assert.equal(response.status, 200, response.text)
            acknowledged.push(...logs)
          }
          t.diagnostic('retried')
          const stored = await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)
          const ids = new Set(stored.map((e) => e.id))
          assert.equal(stored.length - ids.size, 0, 'no event is stored twice (duplicates by id)')
          assert.deepEqual(stored.map((e) => e.data.message).sort(), acknowledged.sort(), 'every acknowledged log is stored once')
        } finally {
          await killPortal(portal)
          await database.drop()
        }
      })
    }
  })
}

if (DIALECTS.includes('sqlite')) {
  describe('a graceful stop of the DuckDB event store under reads', () => {
    test('SIGTERM while log searches run: the portal exits, and a restart reads every acknowledged log', { timeout: 300_000 }, async (t) => {
      const database = await createTestDatabase('sqlite')
      const env: Record<string, string> = {
        DATABASE_URL: database.url,
        PORTAL_DATA_DIR: database.dataDir,
        PORTAL_BOOTSTRAP_TOKEN: ADMIN,
        EVENT_STORE: 'duckdb',
        INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '10000000',
        INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000',
      }
      let portal = await spawnPortal(env)
      try {
        let client = { request: requester(portal.url), adminToken: ADMIN }
        const project = await createProject(client, 'graceful stop')
        let acknowledged = 0
        for (let batch = 0; batch < 200; batch++) {
          const response = await ingest(client, project, Array.from({ length: 500 }, (_, i) => event('log', { message: `b${batch} line ${i}`, level: 'info' })))
          assert.equal(response.status, 200, response.text)
          acknowledged += 500
        }
        // Searches for a text no log holds, beside ingest, each given up by its client after 100 ms: their
        // handlers go on (waiting for the outbox, then scanning in DuckDB) after the HTTP server has nothing
        // left to wait for, so queries may still run when the stop closes DuckDB. A connection closed under a
        // running query hung `portal serve`'s exit for good (seen twice in `npm run bench -- ingest` with
        // EVENT_STORE=duckdb; this test did not catch that race here, and checks the stop and what it kept).
        let searching = true
        const searches = Array.from({ length: 8 }, async () => {
          while (searching) await client.request('GET', `/api/modules/logs/events?project_id=${project.id}&q=absent`, { token: ADMIN, timeoutMs: 100 }).catch(() => null)
        })
        const ingesting = (async () => {
          while (searching) {
            const response = await ingest(client, project, Array.from({ length: 500 }, (_, i) => event('log', { message: `late line ${i}`, level: 'info' }))).catch(() => null)
            if (response?.status === 200) acknowledged += 500
          }
        })()
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        const stopping = Date.now()
        const exit = await Promise.race([
          killPortal(portal, 'SIGTERM').then(() => 'exited'),
          new Promise((resolve) => setTimeout(resolve, 60_000, 'still running 60 s after SIGTERM')),
        ])
        searching = false
        await Promise.all([...searches, ingesting])
        assert.equal(exit, 'exited')
        t.diagnostic(`exited ${Date.now() - stopping} ms after SIGTERM`)

        portal = await spawnPortal(env)
        client = { request: requester(portal.url), adminToken: ADMIN }
        const stored = await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)
        assert.equal(stored.length, acknowledged, 'every acknowledged log, once')
      } finally {
        await killPortal(portal)
        await database.drop()
      }
    })
  })
}
