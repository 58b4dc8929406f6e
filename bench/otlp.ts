// OTLP intake against native ingest of the same events, in the same run: spans/s through
// /api/otlp/v1/traces (protobuf, 100 spans a request) and log records/s through /api/otlp/v1/logs
// (protobuf, 100 records a request), beside signed POST /api/ingest batches of the 100 events
// the receiver makes of them. Target: OTLP at 0.8 or more of native. Loopback only; every run is
// bounded by BENCH_SECONDS.
import autocannon from 'autocannon'
import { hmacSha256Hex } from '../src/identity/secrets.ts'
import { logsService, traceService } from '../src/intake/otlp/proto.ts'
import { translateLogs } from '../src/intake/otlp/logs.ts'
import { translateTraces } from '../src/intake/otlp/traces.ts'
import { createTestDatabase, type Dialect } from '../test/support/portal.ts'
import { killPortal, spawnPortal } from '../test/support/process.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = 16
const PER_REQUEST = 100
const ADMIN = `pat_${'b'.repeat(40)}`

const attribute = (key: string, value: string | number) => ({ key, value: typeof value === 'string' ? { stringValue: value } : { intValue: value } })
const resource = { attributes: [attribute('service.name', 'checkout'), attribute('host.name', 'web-1')] }
const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n)

function spans() {
  const start = Date.now()
  const traceId = Buffer.from('5b8efff798038103d269b633813fc60c', 'hex')
  return Array.from({ length: PER_REQUEST }, (_, i) => ({
    traceId,
    spanId: Buffer.from((i + 1).toString(16).padStart(16, '0'), 'hex'),
    parentSpanId: i === 0 ? undefined : Buffer.from('1'.padStart(16, '0'), 'hex'),
    name: `GET /api/orders/${1000 + i}`,
    kind: 2,
    startTimeUnixNano: nanos(start),
    endTimeUnixNano: nanos(start + 12),
    attributes: [attribute('http.route', '/api/orders/:id'), attribute('http.status_code', 200)],
    status: { code: 1 },
  }))
}

function logRecords() {
  const now = Date.now()
  return Array.from({ length: PER_REQUEST }, (_, i) => ({
    timeUnixNano: nanos(now),
    severityNumber: i % 10 === 0 ? 17 : 9,
    severityText: i % 10 === 0 ? 'ERROR' : 'INFO',
    body: { stringValue: `GET /api/orders/${1000 + i} answered 200 in 12 ms` },
    attributes: [attribute('requestId', `req-${i}`), attribute('userId', 42)],
  }))
}

const traceRequest = () => ({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'http' }, spans: spans() }] }] })
const logsRequest = () => ({ resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'http' }, logRecords: logRecords() }] }] })

/** The signed ingest body holding the very events the receiver makes of an OTLP request. */
function nativeBody(events: { type: string; ts: string; data: Record<string, unknown> }[]): string {
  return JSON.stringify({ events })
}

async function measure(url: string, headers: Record<string, string>, body: string | Buffer) {
  const result = await autocannon({ url, method: 'POST', connections: CONNECTIONS, duration: SECONDS, headers, body })
  if (result.errors > 0) throw new Error(`${result.errors} connection errors on ${url}`)
  return { itemsPerSecond: Math.round((result['2xx'] / result.duration) * PER_REQUEST), p99: result.latency.p99, non2xx: result.non2xx }
}

async function withOtlpPortal<T>(dialect: Dialect, run: (url: string, key: string, secret: string) => Promise<T>): Promise<T> {
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
    const key = await (await fetch(`${portal.url}/api/projects/${project.id}/keys`, { method: 'POST', headers, body: '{"scopes":["ingest","otlp"]}' })).json()
    return await run(portal.url, key.key, key.webhookSecret)
  } finally {
    await killPortal(portal, 'SIGTERM')
    await database.drop()
  }
}

export async function run() {
  const dialects = (process.env.BENCH_DATABASES ?? 'sqlite,postgres').split(',') as Dialect[]
  console.log(`otlp: ${CONNECTIONS} connections, ${SECONDS} s per run, loopback, ${PER_REQUEST} items a request; native = signed POST /api/ingest of the same events`)
  console.log('database   signal  native ev/s  otlp items/s  ratio  native p99 ms  otlp p99 ms  non-2xx')
  for (const dialect of dialects) {
    await withOtlpPortal(dialect, async (url, key, secret) => {
      const signals = [
        { name: 'traces', path: '/api/otlp/v1/traces', request: traceRequest(), service: traceService, translate: translateTraces },
        { name: 'logs', path: '/api/otlp/v1/logs', request: logsRequest(), service: logsService, translate: translateLogs },
      ]
      for (const signal of signals) {
        const protobuf = Buffer.from(signal.service.request.encode(signal.request).finish())
        const decoded = signal.service.request.decode(protobuf)
        const native = nativeBody(signal.translate(decoded as any, Date.now()).events)
        const nativeResult = await measure(`${url}/api/ingest`, { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-service-signature': hmacSha256Hex(secret, native) }, native)
        const otlpResult = await measure(`${url}${signal.path}`, { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf' }, protobuf)
        const ratio = (otlpResult.itemsPerSecond / nativeResult.itemsPerSecond).toFixed(2)
        console.log(
          `${dialect.padEnd(10)} ${signal.name.padEnd(6)}  ${String(nativeResult.itemsPerSecond).padStart(11)}  ${String(otlpResult.itemsPerSecond).padStart(12)}  ${ratio.padStart(5)}  ${String(nativeResult.p99).padStart(13)}  ${String(otlpResult.p99).padStart(11)}  ${String(nativeResult.non2xx + otlpResult.non2xx).padStart(7)}`,
        )
      }
    })
  }
}
