// Webhook delivery on SQLite (the default store), loopback only, bounded in count and time:
// - the median time from `POST /api/webhooks/deliver` to the receiver getting the first attempt;
// - deliveries per second from the durable queue to a receiver that answers at once, and to one that
//   answers after 200 ms: a backlog is enqueued while no portal runs, then a portal starts and drains it;
// - end to end through the HTTP deliver call, which commits (fsync) once per call.
// BENCH_WEBHOOK_DELIVERIES scales it. Stops by itself.
import { fork, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig, type Config } from '../src/config.ts'
import { modules } from '../src/modules/registry.ts'
import { createLogger, openMigratedStorage, startPortal, type RunningPortal } from '../src/portal.ts'
import { enqueueMessage } from '../src/webhooks/enqueue.ts'

const DELIVERIES = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 4000)
const FAST_ENDPOINTS = 16
const SLOW_ENDPOINTS = 16
const ENQUEUE_CONCURRENCY = 16
const LATENCY_SAMPLES = 100
const DEADLINE_MS = 120_000
const ADMIN = `pat_${'w'.repeat(40)}`

interface ReceiverStats {
  calls: number
  firstCallAt: number
  lastCallAt: number
  firstArrival: Record<string, number>
}

export interface Receiver {
  url: string
  child: ChildProcess
  stats(): Promise<ReceiverStats>
  reset(): Promise<unknown>
}

export async function startReceiver(delayMs: number): Promise<Receiver> {
  const child = fork(path.join(import.meta.dirname, 'webhook-receiver.ts'), { env: { ...process.env, RECEIVER_DELAY_MS: String(delayMs) }, execArgv: ['--import', 'tsx'] })
  const { port } = await new Promise<{ port: number }>((resolve) => child.once('message', resolve as (m: unknown) => void))
  const ask = <T>(message: string) =>
    new Promise<T>((resolve) => {
      child.once('message', resolve as (m: unknown) => void)
      child.send(message)
    })
  return { url: `http://127.0.0.1:${port}/hook`, child, stats: () => ask<ReceiverStats>('stats'), reset: () => ask('reset') }
}

async function call(portal: RunningPortal, method: string, route: string, body?: unknown) {
  const response = await fetch(portal.url + route, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`)
  return response.json()
}

function benchConfig(dataDir: string): Config {
  return loadConfig(modules, {
    PORT: '0',
    HOST: '127.0.0.1',
    PORTAL_DATA_DIR: dataDir,
    PORTAL_BOOTSTRAP_TOKEN: ADMIN,
    LOG_LEVEL: 'error',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
  })
}

async function withPortal<T>(config: Config, run: (portal: RunningPortal) => Promise<T>): Promise<T> {
  const portal = await startPortal(config, createLogger(config))
  try {
    return await run(portal)
  } finally {
    await portal.close()
  }
}

async function projectWithEndpoints(portal: RunningPortal, url: string, count: number): Promise<{ projectId: string; endpointIds: string[] }> {
  const project = await call(portal, 'POST', '/api/projects', { name: 'bench' })
  const endpointIds: string[] = []
  for (let i = 0; i < count; i++) endpointIds.push((await call(portal, 'POST', '/api/webhooks/endpoints', { projectId: project.id, url: `${url}/${i}` })).id)
  return { projectId: project.id, endpointIds }
}

async function untilQueueEmpty(portal: RunningPortal, projectId: string, started: number) {
  for (;;) {
    const status = await call(portal, 'GET', `/api/webhooks/status?project_id=${projectId}`)
    if (status.queueDepth === 0) return
    if (performance.now() - started > DEADLINE_MS) throw new Error(`still ${status.queueDepth} pending after ${DEADLINE_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const payload = (n: number) => ({ n, text: 'a payload of a realistic few hundred bytes '.repeat(5) })

/** A backlog of `deliveries` written while no portal runs, then drained by a starting portal; rate from the receiver's clock. */
async function drainBacklog(receiver: Receiver, endpoints: number, deliveries: number) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-bench-webhooks-'))
  const config = benchConfig(dataDir)
  try {
    const { projectId, endpointIds } = await withPortal(config, (portal) => projectWithEndpoints(portal, receiver.url, endpoints))
    const storage = await openMigratedStorage(config)
    const messages = Math.ceil(deliveries / endpoints)
    for (let start = 0; start < messages; start += 100) {
      await storage.db.transaction().execute(async (trx) => {
        for (let n = start; n < Math.min(messages, start + 100); n++) {
          await enqueueMessage(trx, { projectId, eventType: 'bench.backlog', payload: payload(n), endpointIds, attempts: config.webhooks.retrySchedule.length + 1 })
        }
      })
    }
    await storage.close()
    await receiver.reset()
    await withPortal(config, (portal) => untilQueueEmpty(portal, projectId, performance.now()))
    const { calls, firstCallAt, lastCallAt } = await receiver.stats()
    const seconds = (lastCallAt - firstCallAt) / 1000
    return { deliveries: messages * endpoints, calls, endpoints, seconds: Number(seconds.toFixed(2)), deliveriesPerSecond: Math.round(calls / seconds) }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** Deliver calls over HTTP, ENQUEUE_CONCURRENCY at a time, each fanned out to every endpoint, until all succeeded. */
async function endToEnd(portal: RunningPortal, receiver: Receiver, deliveries: number) {
  const { projectId } = await projectWithEndpoints(portal, receiver.url, FAST_ENDPOINTS)
  const messages = Math.ceil(deliveries / FAST_ENDPOINTS)
  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: ENQUEUE_CONCURRENCY }, async () => {
      while (next < messages) await call(portal, 'POST', '/api/webhooks/deliver', { projectId, eventType: 'bench.tick', payload: payload(next++) })
    }),
  )
  const enqueueSeconds = (performance.now() - started) / 1000
  await untilQueueEmpty(portal, projectId, started)
  const seconds = (performance.now() - started) / 1000
  return { deliveries: messages * FAST_ENDPOINTS, deliverCallsPerSecond: Math.round(messages / enqueueSeconds), seconds: Number(seconds.toFixed(2)), deliveriesPerSecond: Math.round((messages * FAST_ENDPOINTS) / seconds) }
}

/** Time from sending deliver to the receiver getting the attempt, one message at a time on an idle queue. */
async function latency(portal: RunningPortal, receiver: Receiver) {
  const { projectId } = await projectWithEndpoints(portal, receiver.url, 1)
  await receiver.reset()
  const sentAt = new Map<string, number>()
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const before = performance.timeOrigin + performance.now()
    const { messageId } = await call(portal, 'POST', '/api/webhooks/deliver', { projectId, eventType: 'bench.latency', payload: { i } })
    sentAt.set(messageId, before)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await untilQueueEmpty(portal, projectId, performance.now())
  const { firstArrival } = await receiver.stats()
  const samples = [...sentAt].filter(([id]) => firstArrival[id] !== undefined).map(([id, at]) => firstArrival[id] - at).sort((a, b) => a - b)
  const at = (q: number) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(1))
  return { samples: samples.length, medianMs: at(0.5), p95Ms: at(0.95), maxMs: at(1) }
}

export async function run() {
  const fast = await startReceiver(0)
  const slow = await startReceiver(200)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-bench-webhooks-'))
  try {
    const { concurrency, endpointConcurrency } = benchConfig(dataDir).webhooks
    console.log(`sqlite, WEBHOOK_CONCURRENCY=${concurrency}, WEBHOOK_ENDPOINT_CONCURRENCY=${endpointConcurrency}`)
    await withPortal(benchConfig(dataDir), async (portal) => {
      console.log('deliver → first attempt, idle queue:', await latency(portal, fast))
      await fast.reset()
      console.log('end to end through HTTP deliver, fast receiver:', await endToEnd(portal, fast, DELIVERIES / 4))
    })
    console.log('queue drain, fast receiver (answers at once):', await drainBacklog(fast, FAST_ENDPOINTS, DELIVERIES))
    console.log('queue drain, slow receiver (answers after 200 ms):', await drainBacklog(slow, SLOW_ENDPOINTS, DELIVERIES / 4))
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
    fast.child.kill()
    slow.child.kill()
  }
}
