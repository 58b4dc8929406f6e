import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { CHECK_REUSE_MS } from '../../src/health/routes.ts'
import { createProject, createTestDatabase, DIALECTS, event, ingest, readAll, requester, type PortalClient, type TestProject } from '../support/portal.ts'
import { killPortal, spawnPortal, type PortalProcess } from '../support/process.ts'
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts'

const ADMIN = `pat_${'o'.repeat(32)}`
const CYCLES = 3
/** Every answer during an outage must come within this long: an outage is a 503, never a hang. */
const ANSWER_WITHIN_MS = 10_000
const HEAL_WITHIN_MS = 20_000

/**
 * What the portal answers while its database is gone or refuses writes: 503s naming it, with
 * Retry-After, and no 500. Reads fail too when the server is gone, and keep working when only writes fail.
 */
async function assertUnavailable(client: PortalClient, project: TestProject, label: string, readsWork: boolean) {
  // A health result answers for up to a second after its check: the outage shows once that has passed.
  await sleep(CHECK_REUSE_MS)
  // At once, as traffic arrives: each request may find a pooled connection lost in the outage.
  const [health, refused, read] = await Promise.all([
    client.request('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS }),
    ingest(client, project, [event('log', { message: `during ${label}` })], { 'x-service-idempotency-key': randomUUID() }, { timeoutMs: ANSWER_WITHIN_MS }),
    client.request('GET', `/api/modules/logs/events?project_id=${project.id}`, { token: ADMIN, timeoutMs: ANSWER_WITHIN_MS }),
  ])
  assert.equal(health.status, 503, `${label}: health ${health.text}`)
  assert.equal(health.body.status, 'unavailable')
  assert.equal(health.body.checks.database.status, 'failing', `${label}: the failing check is the database's`)
  assert.ok(health.body.checks.database.error, 'the check says why')

  assert.equal(refused.status, 503, `${label}: ingest ${refused.text}`)
  assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  assert.equal(refused.body.code, 'database_unavailable')
  assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to try again')

  assert.equal(read.status, readsWork ? 200 : 503, `${label}: a read ${read.text}`)
  if (!readsWork) assert.equal(read.body.code, 'database_unavailable')
}

/** Waits, without a restart, until health is 200 again; then an ingest is stored and read back. */
async function assertHeals(client: PortalClient, project: TestProject, label: string) {
  const deadline = Date.now() + HEAL_WITHIN_MS
  let health
  do {
    await sleep(200)
    health = await client.request('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS })
  } while (health.status !== 200 && Date.now() < deadline)
  assert.equal(health.status, 200, `${label}: health heals by itself: ${health.text}`)
  const message = `after ${label}`
  const stored = await ingest(client, project, [event('log', { message })], { 'x-service-idempotency-key': randomUUID() })
  assert.equal(stored.status, 200, `${label}: ingest heals by itself: ${stored.text}`)
  const logs = await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)
  assert.equal(logs.filter((log) => log.data.message === message).length, 1, 'the ingest after the outage is stored')
}

/** A portal answering 500 or logging an unhandled error during an outage has a bug. */
function assertNoInternalErrors(portal: PortalProcess) {
  assert.doesNotMatch(portal.output(), /unhandled error|"statusCode":500|uncaught/i)
  assert.equal(portal.child.exitCode, null, 'the portal is still running')
}

describe('database outage on PostgreSQL', { skip: !DIALECTS.includes('postgres') && 'TEST_DATABASES excludes postgres' }, () => {
  const outages = {
    'the connection cut (server stopped)': (proxy: TcpProxy) => proxy.cut(),
    'the connection stalled (network partition)': (proxy: TcpProxy) => proxy.stall(),
  }
  for (const [outage, begin] of Object.entries(outages)) {
    test(`${CYCLES} cycles of ${outage}, then restored: 503 with Retry-After, health names the database, heals without a restart`, { timeout: 180_000 }, async () => {
      const database = await createTestDatabase('postgres')
      const url = new URL(database.url)
      const proxy = await startTcpProxy(Number(url.port || 5432), url.hostname)
      url.host = proxy.address
      const portal = await spawnPortal({
        DATABASE_URL: url.toString(),
        PORTAL_DATA_DIR: database.dataDir,
        PORTAL_BOOTSTRAP_TOKEN: ADMIN,
        // A query lost in the partition fails after this long (the default is 15 s), well within ANSWER_WITHIN_MS.
        DATABASE_QUERY_TIMEOUT_MS: '2000',
      })
      try {
        const client = { request: requester(portal.url), adminToken: ADMIN }
        const project = await createProject(client, 'outage')
        for (let cycle = 1; cycle <= CYCLES; cycle++) {
          // Concurrent reads leave the pool holding several idle connections for the outage to catch.
          await Promise.all(Array.from({ length: 10 }, () => client.request('GET', `/api/modules/logs/events?project_id=${project.id}`, { token: ADMIN })))
          begin(proxy)
          await assertUnavailable(client, project, `outage ${cycle}`, false)
          proxy.restore()
          await assertHeals(client, project, `outage ${cycle}`)
        }
        assertNoInternalErrors(portal)
      } finally {
        await killPortal(portal)
        await proxy.close()
        await database.drop()
      }
    })
  }
})

/** Sets the portal process's file size limit: at 1 byte every write to its database files fails (EFBIG), as on a full disk. */
function limitFileSize(portal: PortalProcess, limit: '1' | 'unlimited') {
  execFileSync('prlimit', ['--pid', String(portal.child.pid), `--fsize=${limit}:unlimited`])
}

describe('database outage on SQLite', { skip: !DIALECTS.includes('sqlite') && 'TEST_DATABASES excludes sqlite' }, () => {
  // Tests run as root, whom file modes do not stop; a file size limit on the portal's process does,
  // and can be lifted again while it runs. Node ignores SIGXFSZ, so the writes fail instead of killing it.
  test(`${CYCLES} cycles of every write refused by the file system and allowed again: 503 with Retry-After, health names the database, heals without a restart`, { timeout: 120_000 }, async () => {
    const database = await createTestDatabase('sqlite')
    // Logging to a file, as `npm start > portal.log` does: its writes fail as well, and must not end the portal.
    const logFile = path.join(database.dataDir, 'portal.log')
    const portal = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, LOG_LEVEL: 'info' }, { logFile })
    try {
      const client = { request: requester(portal.url), adminToken: ADMIN }
      const project = await createProject(client, 'disk full')
      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        limitFileSize(portal, '1')
        await assertUnavailable(client, project, `disk full ${cycle}`, true)
        limitFileSize(portal, 'unlimited')
        await assertHeals(client, project, `disk full ${cycle}`)
      }
      assertNoInternalErrors(portal)
      assert.match(portal.output(), /"msg":"database unavailable"/, 'what was logged while nothing could be written reaches the file afterwards')
    } finally {
      await killPortal(portal)
      await database.drop()
    }
  })
})
