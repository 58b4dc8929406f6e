import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createProject, createTestDatabase, DIALECTS, event, ingest, requester, REDIS_URL, type PortalClient, type TestProject } from '../support/portal.ts'
import { killPortal, spawnPortal, type PortalProcess } from '../support/process.ts'
import { startTcpProxy } from './support/tcp-proxy.ts'

const ADMIN = `pat_${'r'.repeat(32)}`
const CYCLES = 3
const EVENTS_PER_SECOND = 30
/** Buckets hold one second's allowance: after this long every bucket is full again. */
const REFILL_MS = 1100
const RECONNECT_WITHIN_MS = 20_000

const fullSecond = () => Array.from({ length: EVENTS_PER_SECOND }, (_, i) => event('log', { message: `m${i}` }))
const send = async (client: PortalClient, project: TestProject) => (await ingest(client, project, fullSecond(), {}, { timeoutMs: 5_000 })).status
const count = (portal: PortalProcess, text: string) => portal.output().split(text).length - 1

const WENT_AWAY = 'redis unreachable; ingest rate limits fall back to this instance only'
const CAME_BACK = 'redis answers again'

describe('Redis outage with REDIS_URL set', () => {
  test(`${CYCLES} cycles of Redis cut and restored: each instance limits on its own with one warning, then the limit is shared again`, { timeout: 180_000 }, async () => {
    const dialect = DIALECTS.includes('postgres') ? 'postgres' : 'sqlite'
    const database = await createTestDatabase(dialect)
    const redis = new URL(REDIS_URL)
    const proxy = await startTcpProxy(Number(redis.port || 6379), redis.hostname)
    redis.host = proxy.address
    const env = {
      DATABASE_URL: database.url,
      PORTAL_DATA_DIR: database.dataDir,
      PORTAL_BOOTSTRAP_TOKEN: ADMIN,
      REDIS_URL: redis.toString(),
      INGEST_RATE_LIMIT_EVENTS_PER_SECOND: String(EVENTS_PER_SECOND),
      INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000',
      LOG_LEVEL: 'info',
    }
    // Two instances of one install, as behind a load balancer: one database, one Redis.
    const portals = [await spawnPortal(env), await spawnPortal(env)]
    try {
      const [first, second] = portals.map((portal) => ({ request: requester(portal.url), adminToken: ADMIN }))
      const project = await createProject(first, 'redis outage')

      await sleep(REFILL_MS)
      assert.equal(await send(first, project), 200)
      assert.equal(await send(second, project), 429, 'with Redis, the second instance sees the tokens the first one took')

      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        proxy.cut()
        await sleep(REFILL_MS)
        assert.equal(await send(first, project), 200, 'ingest goes on without Redis')
        assert.equal(await send(first, project), 429, 'the in-process bucket still limits')
        assert.equal(await send(second, project), 200, 'each instance now limits on its own')
        for (const portal of portals) assert.equal(count(portal, WENT_AWAY), cycle, 'one warning per outage per instance')

        proxy.restore()
        // ioredis reconnects with a back-off; until then an instance still limits on its own.
        const deadline = Date.now() + RECONNECT_WITHIN_MS
        let shared = false
        while (!shared && Date.now() < deadline) {
          await sleep(REFILL_MS)
          assert.equal(await send(first, project), 200)
          shared = (await send(second, project)) === 429
        }
        assert.ok(shared, `cycle ${cycle}: the limit is shared through Redis again`)
        for (const portal of portals) await waitFor(() => count(portal, CAME_BACK) === cycle, `cycle ${cycle}: each instance says Redis is back`)
      }
      for (const portal of portals) assert.doesNotMatch(portal.output(), /unhandled error|uncaught/i)
    } finally {
      for (const portal of portals) await killPortal(portal)
      await proxy.close()
      await database.drop()
    }
  })
})

/** Polls `condition`: a log line reaches this process through a pipe, a moment after the answer it went with. */
async function waitFor(condition: () => boolean, message: string) {
  const deadline = Date.now() + RECONNECT_WITHIN_MS
  while (!condition() && Date.now() < deadline) await sleep(100)
  assert.ok(condition(), message)
}
