import { describe, test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from '../../src/storage/sqlite/better-sqlite3.ts'
import { DuckDBInstance } from '@duckdb/node-api'
import pg from 'pg'
import { CHECK_REUSE_MS } from '../../src/health/routes.ts'
import { createProject, DIALECTS, event, ingest, POSTGRES_ADMIN_URL, readAll, requester, type PortalClient, type TestProject } from '../support/portal.ts'
import { killPortal, spawnPortal, type PortalProcess } from '../support/process.ts'

// The data folder (on PostgreSQL, the database's tablespace) on a small tmpfs that ingest fills: what the portal
// answers while full, that it recovers by itself once space is freed, that a stop leaves nothing in the outbox,
// and that a start on the full disk serves health 503 rather than exiting. Every answer is 200, 429 or 503, never a 500.
const ADMIN = `pat_${'d'.repeat(32)}`
const METRICS_TOKEN = 'full-disk-metrics-token'
const LOGS_PER_BATCH = 200
const HEAL_WITHIN_MS = 90_000
const ANSWER_WITHIN_MS = 10_000

/** A tmpfs of `size` at a new folder, or undefined (the test is skipped, saying why) where mounting is refused. */
function mountTmpfs(t: TestContext, size: string): string | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-full-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' })
    return dir
  } catch (error) {
    fs.rmdirSync(dir)
    t.skip(`cannot mount a tmpfs (needs root): ${String((error as Error).message).split('\n')[0]}`)
    return undefined
  }
}

function unmount(dir: string) {
  execFileSync('umount', ['-l', dir])
  fs.rmdirSync(dir)
}

/** Fills what is left of the file system holding `dir` with one file; returns it (delete it to free the space). */
function fill(dir: string, name = 'filler'): string {
  const file = path.join(dir, name)
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${file}`, 'bs=64k'], { stdio: 'ignore' })
  } catch {
    // dd stops with ENOSPC: the file system is full, as meant
  }
  return file
}

/** An answer a client can act on: a success, a rate limit, or a 503 with Retry-After and a documented code. Never a 500. */
function assertOutageOrSuccess(label: string, response: { status: number; headers: Headers; text: string; body: any }) {
  assert.ok([200, 429, 503].includes(response.status), `${label}: ${response.status} ${response.text.slice(0, 300)}`)
  if (response.status !== 503) return
  assert.ok(Number(response.headers.get('retry-after')) > 0, `${label}: Retry-After`)
  if (response.headers.get('content-type')?.startsWith('application/problem+json')) assert.ok(['database_unavailable', 'overloaded'].includes(response.body.code), `${label}: ${response.text}`)
}

/** Ingests log batches, each with its own idempotency key, until `refusals` 503s in a row; returns the acknowledged messages. */
async function ingestUntilRefused(client: PortalClient, project: TestProject, label: string, refusals = 5): Promise<string[]> {
  const acknowledged: string[] = []
  let refusedInARow = 0
  for (let batch = 0; refusedInARow < refusals && batch < 5_000; batch++) {
    // Random text, so that neither SQLite's outbox blocks nor DuckDB's columns compress the disk's worth away.
    const messages = Array.from({ length: LOGS_PER_BATCH }, (_, i) => `${label} b${batch} l${i} ${randomBytes(24).toString('hex')}`)
    const response = await ingest(client, project, messages.map((message) => event('log', { message })), { 'x-service-idempotency-key': randomUUID() }, { timeoutMs: ANSWER_WITHIN_MS })
    assertOutageOrSuccess(`ingest ${batch}`, response)
    if (response.status === 200) {
      acknowledged.push(...messages)
      refusedInARow = 0
    } else if (response.status === 503) {
      refusedInARow++
      await sleep(100)
    }
    if (batch % 10 === 9) {
      // Reads and health along the way: answered, and never a 500.
      assertOutageOrSuccess('read while filling', await client.request('GET', `/api/modules/logs/events?project_id=${project.id}&limit=5`, { token: ADMIN, timeoutMs: ANSWER_WITHIN_MS }))
      assertOutageOrSuccess('health while filling', await client.request('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS }))
    }
  }
  assert.equal(refusedInARow, refusals, 'ingest is refused once the disk is full')
  return acknowledged
}

/**
 * Polls health until 200. `handover`: the stand-in of a start on a full disk gives up the address to the portal, and
 * a connection that meets that moment (milliseconds) may be refused or reset: at most one such is allowed.
 */
async function waitForHealth(client: PortalClient, label: string, { handover = false } = {}): Promise<any> {
  const deadline = Date.now() + HEAL_WITHIN_MS
  let health
  let failedConnections = 0
  do {
    await sleep(500)
    health = await client.request('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS }).catch((error: unknown) => {
      if (!handover || ++failedConnections > 1) throw error
      return undefined
    })
    if (health) assertOutageOrSuccess(`health ${label}`, health)
  } while (health?.status !== 200 && Date.now() < deadline)
  assert.ok(health)
  assert.equal(health.status, 200, `${label}: health heals without a restart: ${health?.text}`)
  return health.body
}

/** Every acknowledged log stored exactly once, and nothing else. */
async function assertEveryLogOnce(client: PortalClient, project: TestProject, acknowledged: string[]) {
  const stored = await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)
  assert.equal(new Set(stored.map((log) => log.id)).size, stored.length, 'no event twice (by id)')
  assert.deepEqual(stored.map((log) => log.data.message).sort(), [...acknowledged].sort(), 'every acknowledged log, once')
}

async function metric(client: PortalClient, name: string): Promise<number | undefined> {
  const response = await client.request('GET', '/metrics', { token: METRICS_TOKEN })
  assert.equal(response.status, 200, response.text)
  const line = response.text.split('\n').find((row) => row.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

function assertNoInternalErrors(portal: PortalProcess) {
  assert.doesNotMatch(portal.output(), /unhandled error|"statusCode":500|uncaught/i)
}

describe('a full disk on the embedded default (SQLite, events in DuckDB)', { skip: !DIALECTS.includes('sqlite') && 'TEST_DATABASES excludes sqlite' }, () => {
  test('filled by ingest: 503s with Retry-After, health 503 naming why, recovery without a restart once space is freed, every acknowledged log once; SIGTERM leaves the outbox empty and events.duckdb complete', { timeout: 600_000 }, async (t) => {
    // 48 MB: DuckDB's WAL reaches its 16 MB checkpoint threshold before the disk is full, so that the checkpoint fails
    // and DuckDB invalidates its database (the fault issue 37 found), and the 20 MB filler frees room for its replay.
    const dataDir = mountTmpfs(t, '48m')
    if (!dataDir) return
    const env = {
      DATABASE_URL: `sqlite:${path.join(dataDir, 'portal.db')}`,
      PORTAL_DATA_DIR: dataDir,
      PORTAL_BOOTSTRAP_TOKEN: ADMIN,
      METRICS_TOKEN,
      LOG_LEVEL: 'info',
      INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '10000000',
      INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000',
    }
    let portal = await spawnPortal(env)
    try {
      let client = { request: requester(portal.url), adminToken: ADMIN }
      const project = await createProject(client, 'full disk')
      fs.writeFileSync(path.join(dataDir, 'filler'), Buffer.alloc(20 << 20))
      const acknowledged = await ingestUntilRefused(client, project, 'first')
      t.diagnostic(`acknowledged ${acknowledged.length} logs before the disk was full`)

      await sleep(CHECK_REUSE_MS)
      const [health, read] = await Promise.all([
        client.request('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS }),
        client.request('GET', `/api/modules/logs/events?project_id=${project.id}`, { token: ADMIN, timeoutMs: ANSWER_WITHIN_MS }),
      ])
      assert.equal(health.status, 503, `health on the full disk: ${health.text}`)
      assert.equal(health.body.checks.eventStore.status, 'failing', 'the event store cannot apply its outbox')
      assert.ok(health.body.checks.eventStore.error, 'and health says why')
      assert.ok(health.body.checks.eventStore.outbox.events > 0, 'the acknowledged events waiting in the outbox are counted')
      assert.equal(read.status, 503, `a read of logs waiting in the outbox: ${read.text}`)
      assert.equal(read.body.code, 'database_unavailable')
      assert.ok(Number(read.headers.get('retry-after')) > 0)
      assert.equal(await metric(client, 'portal_event_store_up'), 0)

      fs.rmSync(path.join(dataDir, 'filler'))
      const healed = await waitForHealth(client, 'after space was freed')
      assert.equal(healed.checks.eventStore.status, 'ok')
      await assertEveryLogOnce(client, project, acknowledged)
      const after = await ingest(client, project, [event('log', { message: 'after the disk had room again' })])
      assert.equal(after.status, 200, after.text)
      acknowledged.push('after the disk had room again')
      assert.equal(await metric(client, 'portal_event_store_up'), 1)
      assert.ok((await metric(client, 'portal_event_store_outages_total'))! >= 1, 'the outage is counted')
      assert.match(portal.output(), /event store unavailable/, 'the outage is logged')
      assert.match(portal.output(), /available again/, 'and the recovery')
      assertNoInternalErrors(portal)

      // Heavy ingest, then a clean stop: the whole outbox is applied before the exit.
      for (let batch = 0; batch < 100; batch++) {
        const messages = Array.from({ length: LOGS_PER_BATCH }, (_, i) => `stop b${batch} l${i}`)
        const response = await ingest(client, project, messages.map((message) => event('log', { message })))
        assert.equal(response.status, 200, response.text)
        acknowledged.push(...messages)
      }
      await killPortal(portal, 'SIGTERM')
      assert.equal(portal.child.exitCode, 0)
      assert.match(portal.output(), /event outbox applied/)
      const state = new Database(path.join(dataDir, 'portal.db'), { readonly: true })
      assert.equal((state.prepare('select count(*) as n from event_outbox').get() as { n: number }).n, 0, 'the outbox is empty after a clean stop')
      state.close()
      const events = await DuckDBInstance.create(path.join(dataDir, 'events.duckdb'), { access_mode: 'READ_ONLY' })
      const connection = await events.connect()
      const stored = (await connection.runAndReadAll(`select count(*), count(distinct id) from log_events where project_id = '${project.id}'`)).getRows()[0]
      connection.closeSync()
      events.closeSync()
      assert.deepEqual(stored.map(Number), [acknowledged.length, acknowledged.length], 'events.duckdb alone holds every acknowledged log, once')

      // A start on the full disk: health 503 with the reason, every request 503, then the portal as usual once freed.
      const filler = fill(dataDir)
      fs.rmSync(path.join(dataDir, 'portal.db-shm'), { force: true })
      portal = await spawnPortal(env, { waitFor: 'answer' })
      client = { request: requester(portal.url), adminToken: ADMIN }
      const degraded = await client.request('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS })
      assert.equal(degraded.status, 503, `health of a start on a full disk: ${degraded.text}`)
      assert.equal(degraded.body.status, 'unavailable')
      t.diagnostic(`started on the full disk: ${JSON.stringify(degraded.body.checks)}`)
      assertOutageOrSuccess('ingest on a full disk', await ingest(client, project, [event('log', { message: 'refused' })], {}, { timeoutMs: ANSWER_WITHIN_MS }))
      const readOnFull = await client.request('GET', `/api/modules/logs/events?project_id=${project.id}&limit=5`, { token: ADMIN, timeoutMs: ANSWER_WITHIN_MS })
      assertOutageOrSuccess('read on a full disk', readOnFull)
      fs.rmSync(filler)
      await waitForHealth(client, 'a start on a full disk, once freed', { handover: true })
      await assertEveryLogOnce(client, project, acknowledged)
      assertNoInternalErrors(portal)
    } finally {
      await killPortal(portal)
      unmount(dataDir)
    }
  })
})

describe('a full disk on PostgreSQL (the database in a tablespace on the tmpfs)', { skip: !DIALECTS.includes('postgres') && 'TEST_DATABASES excludes postgres' }, () => {
  test('filled by ingest: 503 database_unavailable with Retry-After, reads go on, recovery without a restart, every acknowledged log once', { timeout: 600_000 }, async (t) => {
    const dir = mountTmpfs(t, '64m')
    if (!dir) return
    const suffix = randomBytes(4).toString('hex')
    const [tablespace, name] = [`portal_full_${suffix}`, `portal_test_full_${suffix}`]
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
    await admin.connect()
    let portal: PortalProcess | undefined
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-test-'))
    try {
      const location = path.join(dir, 'pg')
      fs.mkdirSync(location)
      execFileSync('chown', ['postgres:postgres', location])
      await admin.query(`create tablespace ${tablespace} location '${location}'`)
      await admin.query(`create database ${name} tablespace ${tablespace}`)
      const url = new URL(POSTGRES_ADMIN_URL)
      url.pathname = `/${name}`
      portal = await spawnPortal({ DATABASE_URL: url.toString(), PORTAL_DATA_DIR: dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '10000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000' })
      const client = { request: requester(portal.url), adminToken: ADMIN }
      const project = await createProject(client, 'full disk')
      // What is left but 16 MB: ingest fills that.
      const { bavail, bsize } = fs.statfsSync(dir)
      const filler = path.join(dir, 'filler')
      fs.writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - (16 << 20))))
      const acknowledged = await ingestUntilRefused(client, project, 'pg')
      t.diagnostic(`acknowledged ${acknowledged.length} logs before the tablespace was full`)
      const read = await client.request('GET', `/api/modules/logs/events?project_id=${project.id}&limit=5`, { token: ADMIN, timeoutMs: ANSWER_WITHIN_MS })
      assert.equal(read.status, 200, `reads go on while writes are refused: ${read.text}`)
      assertOutageOrSuccess('health on the full tablespace', await client.request('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS }))

      fs.rmSync(filler)
      await waitForHealth(client, 'after space was freed')
      const after = await ingest(client, project, [event('log', { message: 'after the disk had room again' })])
      assert.equal(after.status, 200, after.text)
      acknowledged.push('after the disk had room again')
      await assertEveryLogOnce(client, project, acknowledged)
      assertNoInternalErrors(portal)
    } finally {
      if (portal) await killPortal(portal)
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => {})
      await admin.query(`drop tablespace if exists ${tablespace}`).catch(() => {})
      await admin.end()
      fs.rmSync(dataDir, { recursive: true, force: true })
      unmount(dir)
    }
  })
})
