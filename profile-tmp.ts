import autocannon from 'autocannon'
import { hmacSha256Hex } from '/work/main/src/identity/secrets.ts'
import { createTestDatabase } from '/work/main/test/support/portal.ts'
import { killPortal, spawnPortal } from '/work/main/test/support/process.ts'
const ADMIN = `pat_${'a'.repeat(40)}`
const database = await createTestDatabase((process.env.DIALECT ?? 'sqlite') as any)
const portal = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, LOG_LEVEL: 'warn', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '10000000', NODE_OPTIONS: process.env.PROF ? '--cpu-prof --cpu-prof-dir=/work/scratch/cpu2' : '' , SQLITE_SYNCHRONOUS: process.env.SQ ?? 'full'})
const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
const project = await (await fetch(`${portal.url}/api/projects`, { method: 'POST', headers, body: '{"name":"bench"}' })).json()
const key = await (await fetch(`${portal.url}/api/projects/${project.id}/keys`, { method: 'POST', headers, body: '{}' })).json()
const size = Number(process.env.SIZE ?? 100)
const body = JSON.stringify({ events: Array.from({ length: size }, (_, i) => ({ type: 'log', ts: new Date().toISOString(), data: { level: i % 10 === 0 ? 'error' : 'info', message: `GET /api/orders/${1000 + i} answered 200 in 12 ms`, module: 'http', fields: { requestId: `req-${i}`, userId: 42 } } })) })
const r = await autocannon({ url: `${portal.url}/api/ingest`, method: 'POST', connections: 16, duration: Number(process.env.SECS ?? 5), headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'x-service-signature': hmacSha256Hex(key.webhookSecret, body) }, body })
console.log(`${process.env.LABEL ?? ''} batch ${size}: ${Math.round(r['2xx'] / r.duration * size)} ev/s, p50 ${r.latency.p50} p99 ${r.latency.p99}, non2xx ${r.non2xx}`)
await killPortal(portal, 'SIGTERM')
await database.drop()
