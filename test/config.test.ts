import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import fs from 'node:fs'
import path from 'node:path'
import { ConfigError, loadConfig } from '../src/config.ts'
import { modules } from '../src/modules/registry.ts'
import { createTestDatabase } from './support/portal.ts'
import { spawnPortal, killPortal } from './support/process.ts'

const run = promisify(execFile)
const PORTAL_BIN = path.resolve(import.meta.dirname, '../bin/portal.js')

describe('configuration', () => {
  test('defaults match the README', () => {
    const config = loadConfig(modules, {})
    assert.equal(config.port, 8080)
    assert.equal(config.host, '0.0.0.0')
    assert.match(config.databaseUrl, /^sqlite:.*data\/portal\.db$/)
    assert.deepEqual(config.ingest, { eventsPerSecond: 1000, batchesPerSecond: 100, maxBatchBytes: 5 * 1024 * 1024 })
    assert.deepEqual(config.webhooks.retrySchedule, [5, 300, 1800, 7200, 18000, 36000, 36000])
    assert.equal(config.webhooks.timeoutMs, 10_000)
    assert.deepEqual(config.http, { maxConnections: undefined, headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 72_000, maxPipelinedRequests: 8 })
  })

  test('retention: RETENTION_DAYS for every type, audit a year, RETENTION_DAYS_<TYPE> named by the registry', () => {
    const defaults = loadConfig(modules, {}).retention.days
    assert.deepEqual(Object.keys(defaults).sort(), modules.map((module) => module.type).sort())
    assert.equal(defaults.log, 30)
    assert.equal(defaults.audit, 365)
    const set = loadConfig(modules, { RETENTION_DAYS: '10', RETENTION_DAYS_LOG: '7', RETENTION_DAYS_FEATURE_FLAG: '90' }).retention.days
    assert.deepEqual([set.log, set.feature_flag, set.deploy, set.audit], [7, 90, 10, 365])
  })

  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'localhost:6379'],
    ['INGEST_RATE_LIMIT_EVENTS_PER_SECOND', '0'],
    ['INGEST_RATE_LIMIT_BATCHES_PER_SECOND', '1.5'],
    ['INGEST_RATE_LIMIT_MAX_BATCH_BYTES', '-1'],
    ['WEBHOOK_RETRY_SCHEDULE', '5,soon'],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['PORTAL_BOOTSTRAP_TOKEN', 'short'],
    ['HTTP_MAX_CONNECTIONS', '0'],
    ['HTTP_HEADERS_TIMEOUT_MS', 'soon'],
    ['HTTP_REQUEST_TIMEOUT_MS', '5000'],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '1.5'],
    ['HTTP_MAX_PIPELINED_REQUESTS', '0'],
    ['PUBLIC_URL', 'ftp://observe.example.com'],
    ['TRUST_PROXY', 'every proxy'],
    ['RETENTION_DAYS', '0'],
    ['RETENTION_DAYS_LOG', 'a week'],
    ['RETENTION_DAYS_LOGS', '7'],
    ['RETENTION_INTERVAL_SECONDS', '0'],
  ]) {
    test(`a bad ${name} is refused with a message naming it`, () => {
      assert.throws(() => loadConfig(modules, { [name]: value }), (error: unknown) => error instanceof ConfigError && error.message.startsWith(name))
    })
  }

  test('a bad value stops `portal serve` with the variable’s name and a non-zero exit', async () => {
    await assert.rejects(run(process.execPath, [PORTAL_BIN, 'serve'], { env: { ...process.env, INGEST_RATE_LIMIT_EVENTS_PER_SECOND: 'lots' } }), (error: any) => {
      assert.equal(error.code, 2)
      assert.match(error.stderr, /INGEST_RATE_LIMIT_EVENTS_PER_SECOND must be a whole number/)
      return true
    })
  })
})

describe('the portal command', () => {
  test('migrate, token create and org create work on a fresh database, and the token opens the API', async () => {
    const database = await createTestDatabase('sqlite')
    const env = { ...process.env, DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir }
    try {
      assert.match((await run(process.execPath, [PORTAL_BIN, 'migrate'], { env })).stdout, /applied core\/001/)
      assert.match((await run(process.execPath, [PORTAL_BIN, 'migrate'], { env })).stdout, /up to date/)
      const viewer = (await run(process.execPath, [PORTAL_BIN, 'token', 'create', '--role', 'viewer'], { env })).stdout.trim()
      assert.match(viewer, /^pat_/)
      const org = (await run(process.execPath, [PORTAL_BIN, 'org', 'create', '--name', 'Second'], { env })).stdout.trim()
      assert.match(org, /^org_/)
      const admin2 = (await run(process.execPath, [PORTAL_BIN, 'token', 'create', '--role', 'admin', '--org', org], { env })).stdout.trim()
      await assert.rejects(run(process.execPath, [PORTAL_BIN, 'token', 'create', '--role', 'owner'], { env }), /--role must be admin or viewer/)

      const portal = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir })
      try {
        const asViewer = await fetch(`${portal.url}/api/projects`, { headers: { authorization: `Bearer ${viewer}` } })
        assert.equal(asViewer.status, 200)
        const created = await fetch(`${portal.url}/api/projects`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin2}`, 'content-type': 'application/json' },
          body: '{"name":"in second org"}',
        })
        const body = await created.text()
        assert.equal(created.status, 201, body)
        assert.equal(JSON.parse(body).orgId, org)
        assert.ok(!portal.output().includes('admin access token was created'), 'no first-start token when tokens exist')
      } finally {
        await killPortal(portal, 'SIGTERM')
      }
    } finally {
      await database.drop()
    }
  })

  test('token create and org create run beside a serving portal, whose process holds events.duckdb', async () => {
    const database = await createTestDatabase('sqlite')
    const env = { ...process.env, DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, EVENT_STORE: '' }
    try {
      const portal = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, EVENT_STORE: '' })
      try {
        assert.ok(fs.existsSync(path.join(database.dataDir, 'events.duckdb')))
        const viewer = (await run(process.execPath, [PORTAL_BIN, 'token', 'create', '--role', 'viewer'], { env })).stdout.trim()
        assert.match((await run(process.execPath, [PORTAL_BIN, 'org', 'create', '--name', 'Beside'], { env })).stdout.trim(), /^org_/)
        assert.equal((await fetch(`${portal.url}/api/projects`, { headers: { authorization: `Bearer ${viewer}` } })).status, 200)
      } finally {
        await killPortal(portal, 'SIGTERM')
      }
    } finally {
      await database.drop()
    }
  })

  test('the first start of an empty database prints an admin token once, and only to the terminal', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const first = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, LOG_LEVEL: 'info' })
      await killPortal(first, 'SIGTERM')
      const token = /\n {2}(pat_\S+)\n/.exec(first.output())?.[1]
      assert.ok(token, first.output())
      const logLines = first.output().split('\n').filter((line) => line.startsWith('{'))
      assert.ok(logLines.length > 0 && logLines.every((line) => !line.includes(token)), 'the token is not in any log line')
      const second = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir })
      try {
        assert.ok(!second.output().includes('pat_'))
        const res = await fetch(`${second.url}/api/projects`, { headers: { authorization: `Bearer ${token}` } })
        assert.equal(res.status, 200)
      } finally {
        await killPortal(second, 'SIGTERM')
      }
    } finally {
      await database.drop()
    }
  })

  test('PORTAL_BOOTSTRAP_TOKEN exists as an admin token after every start', async () => {
    const database = await createTestDatabase('sqlite')
    const token = `pat_${'b'.repeat(40)}`
    try {
      for (let i = 0; i < 2; i++) {
        const portal = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: token })
        try {
          const res = await fetch(`${portal.url}/api/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"name":"b"}' })
          assert.equal(res.status, 201)
          assert.ok(!portal.output().includes(token))
        } finally {
          await killPortal(portal, 'SIGTERM')
        }
      }
    } finally {
      await database.drop()
    }
  })
})
