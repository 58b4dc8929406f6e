// Webhook delivery across instances: a backlog drained by one portal process, then by three, on one
// PostgreSQL database, to loopback receivers in their own processes. Bounded in count and time.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { loadConfig } from '../src/config.ts'
import { modules } from '../src/modules/registry.ts'
import { openMigratedStorage } from '../src/portal.ts'
import { enqueueMessage } from '../src/webhooks/enqueue.ts'
import { killPortal, spawnPortal, type PortalProcess } from '../test/support/process.ts'
import { startReceiver, type Receiver } from './webhooks.ts'

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ADMIN_TOKEN = `pat_${randomBytes(24).toString('hex')}`
const DELIVERIES = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 4000)
const ENDPOINTS = 16
const ENDPOINT_CONCURRENCY = 16
const SLOW_MS = 200
const DEADLINE_MS = 180_000

/**
 * Deliveries per second draining a backlog through one portal and through three (each its own process),
 * to a receiver answering at once and to one answering after 200 ms. The bound printed beside the slow
 * figure is what WEBHOOK_ENDPOINT_CONCURRENCY allows the whole deployment: endpoints × bound / 0.2 s.
 * The backlog is committed in one transaction, so every dispatcher sees all of it at once.
 */
export async function run() {
  const database = `portal_bench_${randomBytes(6).toString('hex')}`
  await adminQuery(`create database ${database}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-bench-instances-webhooks-'))
  const env = {
    DATABASE_URL: url.toString(),
    PORTAL_DATA_DIR: dataDir,
    PORTAL_BOOTSTRAP_TOKEN: ADMIN_TOKEN,
    PORTAL_SECRET_KEY: randomBytes(32).toString('base64'),
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
  }
  const fast = await startReceiver(0)
  const slow = await startReceiver(SLOW_MS)
  const portals: PortalProcess[] = []
  const storage = await openMigratedStorage(loadConfig(modules, { ...env, PORT: '0' }))
  try {
    portals.push(await spawnPortal(env, { timeoutMs: 180_000 }))
    const fastProject = await projectWithEndpoints(portals[0].url, fast.url)
    const slowProject = await projectWithEndpoints(portals[0].url, slow.url)
    const slowBound = Math.round((ENDPOINTS * ENDPOINT_CONCURRENCY) / (SLOW_MS / 1000))
    console.log(`postgres, ${ENDPOINTS} endpoints, WEBHOOK_ENDPOINT_CONCURRENCY=${ENDPOINT_CONCURRENCY} (a bound for the deployment)`)
    for (const instances of [1, 3]) {
      while (portals.length < instances) portals.push(await spawnPortal(env, { timeoutMs: 180_000 }))
      const fastResult = await drain(storage, fast, fastProject, DELIVERIES)
      console.log(`${instances} instance(s), receiver answering at once: ${describe(fastResult)}`)
      const slowResult = await drain(storage, slow, slowProject, DELIVERIES / 4)
      console.log(`${instances} instance(s), receiver answering after ${SLOW_MS} ms: ${describe(slowResult)}; bound ${slowBound}/s`)
    }
  } finally {
    for (const portal of portals) await killPortal(portal, 'SIGTERM')
    await storage.close()
    fast.child.kill()
    slow.child.kill()
    await adminQuery(`drop database if exists ${database} with (force)`)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

type Project = { projectId: string; endpointIds: string[] }
type Drained = { deliveries: number; calls: number; seconds: number }

const describe = (result: Drained) =>
  `${result.deliveries} deliveries, ${result.calls} receiver calls in ${result.seconds.toFixed(2)} s: ${Math.round(result.calls / result.seconds)} deliveries/s`

async function drain(storage: Awaited<ReturnType<typeof openMigratedStorage>>, receiver: Receiver, project: Project, deliveries: number): Promise<Drained> {
  await receiver.reset()
  const messages = Math.ceil(deliveries / project.endpointIds.length)
  await storage.db.transaction().execute(async (trx) => {
    for (let n = 0; n < messages; n++) {
      await enqueueMessage(trx, { projectId: project.projectId, eventType: 'bench.backlog', payload: { n, text: 'a payload of a realistic few hundred bytes '.repeat(5) }, endpointIds: project.endpointIds, attempts: 1 })
    }
  })
  const total = messages * project.endpointIds.length
  const started = performance.now()
  for (;;) {
    const { calls, firstCallAt, lastCallAt } = await receiver.stats()
    if (calls >= total) return { deliveries: total, calls, seconds: (lastCallAt - firstCallAt) / 1000 }
    if (performance.now() - started > DEADLINE_MS) throw new Error(`${calls} of ${total} deliveries arrived within ${DEADLINE_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function projectWithEndpoints(portalUrl: string, receiverUrl: string): Promise<Project> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }
  const post = async (route: string, body: unknown) => {
    const response = await fetch(`${portalUrl}${route}`, { method: 'POST', headers, body: JSON.stringify(body) })
    if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`)
    return response.json()
  }
  const project = await post('/api/projects', { name: `webhooks ${receiverUrl}` })
  const endpointIds: string[] = []
  for (let i = 0; i < ENDPOINTS; i++) endpointIds.push((await post('/api/webhooks/endpoints', { projectId: project.id, url: `${receiverUrl}/${i}` })).id)
  return { projectId: project.id, endpointIds }
}

async function adminQuery(text: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}
