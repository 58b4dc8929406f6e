// Ingest throughput: the portal (SQLite and PostgreSQL) against a baseline server that does only the
// unavoidable work, for batches of 1, 10 and 100 events; then p99 latency at half the portal's
// 100-event throughput. Loopback only; every run is bounded by BENCH_SECONDS.
import { fork } from 'node:child_process'
import path from 'node:path'
import autocannon from 'autocannon'
import { hmacSha256Hex } from '../src/identity/secrets.ts'
import { createTestDatabase, type Dialect } from '../test/support/portal.ts'
import { freePort, killPortal, spawnPortal } from '../test/support/process.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = 16
const BATCH_SIZES = [1, 10, 100]
const ADMIN = `pat_${'a'.repeat(40)}`

export interface Target {
  url: string
  key: string
  secret: string
}

function batchBody(size: number): string {
  const events = Array.from({ length: size }, (_, i) => ({
    type: 'log',
    ts: new Date().toISOString(),
    data: { level: i % 10 === 0 ? 'error' : 'info', message: `GET /api/orders/${1000 + i} answered 200 in 12 ms`, module: 'http', fields: { requestId: `req-${i}`, userId: 42 } },
  }))
  return JSON.stringify({ events })
}

async function measure(target: Target, size: number, overallRate?: number) {
  const body = batchBody(size)
  const result = await autocannon({
    url: `${target.url}/api/ingest`,
    method: 'POST',
    connections: overallRate ? 8 : CONNECTIONS,
    duration: SECONDS,
    overallRate,
    headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json', 'x-service-signature': hmacSha256Hex(target.secret, body) },
    body,
  })
  if (result.errors > 0) throw new Error(`${result.errors} connection errors at batch ${size}`)
  // Only 2xx answers count: a 503 from load shedding is the portal protecting itself, not throughput.
  return { eventsPerSecond: Math.round((result['2xx'] / result.duration) * size), p99: result.latency.p99, p50: result.latency.p50, shed: result.non2xx }
}

async function withBaseline<T>(run: (target: Target) => Promise<T>): Promise<T> {
  const port = await freePort()
  const secret = 'whsec_baseline'
  const child = fork(path.join(import.meta.dirname, 'baseline-server.ts'), { env: { ...process.env, PORT: String(port), BENCH_SECRET: secret }, execArgv: ['--import', 'tsx'] })
  await new Promise((resolve) => child.once('message', resolve))
  try {
    return await run({ url: `http://127.0.0.1:${port}`, key: 'unused', secret })
  } finally {
    child.kill('SIGKILL')
  }
}

/** A portal of its own (`portal serve`, limits raised out of the way) over a fresh database, with a project's key. */
export async function withPortal<T>(dialect: Dialect, run: (target: Target) => Promise<T>): Promise<T> {
  const database = await createTestDatabase(dialect)
  const portal = await spawnPortal({
    DATABASE_URL: database.url,
    PORTAL_DATA_DIR: database.dataDir,
    PORTAL_BOOTSTRAP_TOKEN: ADMIN,
    LOG_LEVEL: 'warn',
    INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000000',
    INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '10000000',
  })
  try {
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    const project = await (await fetch(`${portal.url}/api/projects`, { method: 'POST', headers, body: '{"name":"bench"}' })).json()
    const key = await (await fetch(`${portal.url}/api/projects/${project.id}/keys`, { method: 'POST', headers, body: '{}' })).json()
    return await run({ url: portal.url, key: key.key, secret: key.webhookSecret })
  } finally {
    await killPortal(portal, 'SIGTERM')
    await database.drop()
  }
}

export async function run() {
  const baseline: Record<number, number> = {}
  await withBaseline(async (target) => {
    for (const size of BATCH_SIZES) baseline[size] = (await measure(target, size)).eventsPerSecond
  })
  console.log(`ingest: ${CONNECTIONS} connections, ${SECONDS} s per run, loopback, log events of ~200 bytes`)
  console.log('database   batch  baseline ev/s  portal ev/s  ratio  p50 ms  p99 ms  non-2xx')
  for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
    await withPortal(dialect, async (target) => {
      let full = 0
      for (const size of BATCH_SIZES) {
        const result = await measure(target, size)
        if (size === 100) full = result.eventsPerSecond
        const ratio = (result.eventsPerSecond / baseline[size]).toFixed(2)
        console.log(`${dialect.padEnd(10)} ${String(size).padStart(5)}  ${String(baseline[size]).padStart(13)}  ${String(result.eventsPerSecond).padStart(11)}  ${ratio.padStart(5)}  ${String(result.p50).padStart(6)}  ${String(result.p99).padStart(6)}  ${String(result.shed).padStart(7)}`)
      }
      const half = await measure(target, 100, Math.max(1, Math.round(full / 100 / 2)))
      console.log(`${dialect.padEnd(10)} at half load (${Math.round(full / 2)} ev/s offered in 100-event batches): p50 ${half.p50} ms, p99 ${half.p99} ms, ${half.shed} non-2xx`)
    })
  }
}
