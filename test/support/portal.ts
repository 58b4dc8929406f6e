import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'
import { loadConfig, type Config } from '../../src/config.ts'
import { modules } from '../../src/modules/registry.ts'
import { createAccessToken, DEFAULT_ORG_ID } from '../../src/identity/store.ts'
import { hmacSha256Hex } from '../../src/identity/secrets.ts'
import { createLogger, openMigratedStorage, startPortal, type RunningPortal } from '../../src/portal.ts'
import { checkEveryResponse } from './openapi-conformance.ts'

export type Dialect = 'sqlite' | 'postgres'

/** The databases every storage test runs on; TEST_DATABASES=sqlite (or postgres) narrows it while developing. */
export const DIALECTS: Dialect[] = (process.env.TEST_DATABASES ?? 'sqlite,postgres').split(',').map((d) => d.trim()) as Dialect[]

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * A fresh database of the dialect, and how to drop it afterwards: empty, or with `migrated` a copy of one
 * that every migration has run on. On PostgreSQL that copy is made from a template database in about 0.2 s,
 * where migrating takes 4–6 s (the event tables' day partitions), which was most of a suite's set-up.
 */
export async function createTestDatabase(dialect: Dialect, { migrated = false } = {}): Promise<{ url: string; dataDir: string; drop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-test-'))
  if (dialect === 'sqlite') {
    return { url: `sqlite:${path.join(dataDir, 'portal.db')}`, dataDir, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) }
  }
  const name = `portal_test_${randomBytes(6).toString('hex')}`
  const create = async () => adminQuery(`create database ${name}${migrated ? ` template ${await migratedTemplate()}` : ''}`)
  try {
    await create()
  } catch (error) {
    if (!migrated) throw error
    template = undefined // a run of other sources on this server may have dropped ours as stale: make it again
    await create()
  }
  const url = new URL(POSTGRES_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      await adminQuery(`drop database if exists ${name} with (force)`)
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

let template: Promise<string> | undefined

/**
 * The name of a PostgreSQL database migrated by the current sources, made by the first test file that asks
 * (the others wait on an advisory lock). Its name holds a hash of src/ and today's date, so an edited
 * migration, or a day that moves the partitions made ahead, gives a new one; all but the newest few are dropped.
 */
function migratedTemplate(): Promise<string> {
  return (template ??= (async () => {
    const hash = createHash('sha256')
    const sources = path.resolve(import.meta.dirname, '../../src')
    for (const file of fs.readdirSync(sources, { recursive: true, encoding: 'utf8' }).sort()) {
      const full = path.join(sources, file)
      if (fs.statSync(full).isFile()) hash.update(file).update(fs.readFileSync(full))
    }
    const name = `portal_template_${hash.digest('hex').slice(0, 12)}_${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
    await client.connect()
    try {
      await client.query(`select pg_advisory_lock(hashtext('portal test template'))`)
      if ((await client.query('select 1 from pg_database where datname = $1', [name])).rowCount) return name
      // Templates of other sources are dropped, but for the newest few: a run of another checkout (a git
      // worktree) may be using one now, and dropping it under that run made the two drop each other's.
      const stale = await client.query<{ datname: string }>(`select datname from pg_database where starts_with(datname, 'portal_template_') order by oid desc offset 3`)
      for (const { datname } of stale.rows) await client.query(`drop database if exists ${datname}`).catch(() => {}) // one being copied stays
      const building = `${name}_building`
      await client.query(`drop database if exists ${building}`)
      await client.query(`create database ${building}`)
      const url = new URL(POSTGRES_ADMIN_URL)
      url.pathname = `/${building}`
      const storage = await openMigratedStorage(loadConfig(modules, { DATABASE_URL: url.toString(), PORTAL_DATA_DIR: os.tmpdir() }))
      await storage.close()
      await client.query(`alter database ${building} rename to ${name}`)
      return name
    } finally {
      await client.query(`select pg_advisory_unlock(hashtext('portal test template'))`).catch(() => {})
      await client.end()
    }
  })())
}

async function adminQuery(text: string) {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

export interface TestPortal {
  dialect: Dialect
  url: string
  portal: RunningPortal
  config: Config
  /** an admin access token of the default organisation */
  adminToken: string
  /** an access token with the viewer role */
  viewerToken: string
  logs: string[]
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>
  close(): Promise<void>
}

export interface RequestOptions {
  token?: string
  body?: unknown
  headers?: Record<string, string>
  /** abort (the request rejects) when no answer came within this long */
  timeoutMs?: number
}

/** What the helpers below need of a portal: an in-process TestPortal, or a spawned one wrapped with `requester`. */
export type PortalClient = Pick<TestPortal, 'request' | 'adminToken'>

/** JSON-minded HTTP requests to the portal at `base`; a body that is not JSON is kept as text. */
export function requester(base: string): TestPortal['request'] {
  return async (method, requestPath, options = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs)
    const response = await fetch(base + requestPath, { method, headers, body, signal })
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    return { status: response.status, headers: response.headers, body: parsed, text }
  }
}

export interface TestResponse {
  status: number
  headers: Headers
  body: any
  text: string
}

export type TestDatabase = Awaited<ReturnType<typeof createTestDatabase>>

/** A real portal listening on loopback over a fresh database; `env` is read like the process environment. */
export async function startTestPortal(dialect: Dialect, env: Record<string, string> = {}, options: TestPortalOptions = {}): Promise<TestPortal> {
  const database = await createTestDatabase(dialect, { migrated: true })
  const t = await startTestPortalOn(dialect, database, env, options)
  return {
    ...t,
    async close() {
      await t.close()
      await database.drop()
    },
  }
}

export interface TestPortalOptions {
  /**
   * Check every response against the OpenAPI document (the default). Benchmarks turn it off: it parses and
   * validates each body before it is sent, which users' portals do not.
   */
  checkResponses?: boolean
}

/**
 * A real portal over an existing database, which its `close` leaves in place: for a restart, or for
 * several instances sharing one PostgreSQL database.
 */
export async function startTestPortalOn(dialect: Dialect, database: TestDatabase, env: Record<string, string> = {}, { checkResponses = true }: TestPortalOptions = {}): Promise<TestPortal> {
  const config = loadConfig(modules, {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    PORTAL_DATA_DIR: database.dataDir,
    LOG_LEVEL: 'info',
    // These portals share the test's event loop, which the test and any other portal it starts (building
    // its routes) block at times: that is not load, and must not turn an assertion into a
    // 503. Shedding is tested in test/faults/overload.test.ts, which sets its own threshold.
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
    // Tests store events dated months back; retention runs only where a test asks (portal.retention.runNow).
    RETENTION_INTERVAL_SECONDS: '86400',
    // EVENT_STORE=sqlite runs the SQLite portals of a suite on the row store, =duckdb on DuckDB (docs/event-store.md).
    ...(process.env.EVENT_STORE ? { EVENT_STORE: process.env.EVENT_STORE } : {}),
    ...env,
  })
  const logs: string[] = []
  const sink = new (await import('node:stream')).Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString())
      done()
    },
  })
  // Every response this portal sends is checked against its live OpenAPI document; a mismatch fails the
  // test at close (and is printed at once), so the whole suite exercises the document.
  const mismatches: string[] = []
  const portal = await startPortal(config, createLogger(config, sink), {
    beforeListen: (app) => {
      if (!checkResponses) return
      checkEveryResponse(app as never, (mismatch) => {
        mismatches.push(mismatch)
        console.error(`response outside the OpenAPI document: ${mismatch}`)
      })
    },
  })
  const adminToken = (await createAccessToken(portal.ctx.storage.db, { orgId: DEFAULT_ORG_ID, role: 'admin', name: 'test admin' })).token
  const viewerToken = (await createAccessToken(portal.ctx.storage.db, { orgId: DEFAULT_ORG_ID, role: 'viewer', name: 'test viewer' })).token
  const base = portal.url

  return {
    dialect,
    url: base,
    portal,
    config,
    adminToken,
    viewerToken,
    logs,
    request: requester(base),
    async close() {
      await portal.close()
      if (mismatches.length > 0) {
        throw new Error(`${mismatches.length} response(s) did not match the OpenAPI document:\n${[...new Set(mismatches)].slice(0, 20).join('\n')}`)
      }
    },
  }
}

/** Every item of a paged list read (`{ data, nextCursor }`), following the cursors. */
export async function readAll(t: PortalClient, path: string, token = t.adminToken): Promise<any[]> {
  const items: any[] = []
  let cursor: string | null = null
  do {
    const separator = path.includes('?') ? '&' : '?'
    const page = await t.request('GET', `${path}${separator}limit=500${cursor ? `&cursor=${cursor}` : ''}`, { token })
    if (page.status !== 200) throw new Error(`GET ${path}: ${page.status} ${page.text}`)
    items.push(...page.body.data)
    cursor = page.body.nextCursor
  } while (cursor)
  return items
}

export interface TestProject {
  id: string
  key: string
  keyId: string
  webhookSecret: string
  /** the DSN Sentry SDKs take, when the key has the `sentry` scope */
  sentryDsn?: string
}

/** Creates a project and an API key through the HTTP API, as a user would. */
export async function createProject(t: PortalClient, name = 'test project', token = t.adminToken, scopes?: string[]): Promise<TestProject> {
  const project = await t.request('POST', '/api/projects', { token, body: { name } })
  if (project.status !== 201) throw new Error(`project create: ${project.status} ${project.text}`)
  const key = await t.request('POST', `/api/projects/${project.body.id}/keys`, { token, body: { name: 'test key', scopes } })
  if (key.status !== 201) throw new Error(`key create: ${key.status} ${key.text}`)
  return { id: project.body.id, key: key.body.key, keyId: key.body.id, webhookSecret: key.body.webhookSecret, sentryDsn: key.body.sentryDsn }
}

/** Sends a signed ingest batch exactly as an SDK would. */
export async function ingest(
  t: PortalClient,
  project: TestProject,
  events: unknown[] | string,
  headers: Record<string, string> = {},
  options: Pick<RequestOptions, 'timeoutMs'> = {},
): Promise<TestResponse> {
  const body = typeof events === 'string' ? events : JSON.stringify({ events })
  return t.request('POST', '/api/ingest', {
    token: project.key,
    body,
    headers: { 'content-type': 'application/json', 'x-service-signature': hmacSha256Hex(project.webhookSecret, body), ...headers },
    ...options,
  })
}

/** An event of `type` stamped now (or at `ts`). */
export function event(type: string, data: Record<string, unknown>, ts = new Date().toISOString()) {
  return { type, ts, data }
}
