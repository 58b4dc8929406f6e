// Bytes per log event of the whole data folder after a clean stop, the portal end to end (HTTP, ingest,
// outbox, materialiser), with EVENT_STORE=sqlite (rows) and duckdb (a new data folder's default), over the same
// realistic logs (workload/realistic-logs.ts), 100-event batches, one connection. BENCH_PORTAL_EVENTS sets
// the count (default 100,000); EVENT_STORE=duckdb (or sqlite) measures that store alone. The bound beside
// it: the same events as JSON lines, deflated.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { createProject, createTestDatabase, ingest, startTestPortalOn } from '../test/support/portal.ts'
import { realisticLogs } from './workload/realistic-logs.ts'

const EVENTS = Number(process.env.BENCH_PORTAL_EVENTS ?? 100_000)
const BATCH = 100
const STORES = process.env.EVENT_STORE ? [process.env.EVENT_STORE] : ['sqlite', 'duckdb']

/** Each file of a data folder with its size in bytes. */
function fileSizes(dir: string): [name: string, bytes: number][] {
  return fs.readdirSync(dir).map((name) => [name, fs.statSync(path.join(dir, name)).size])
}

const END_MS = Date.now()
const batchOf = (first: number) => realisticLogs(BATCH, { first, total: EVENTS, endMs: END_MS })

export async function run() {
  const eventBatches = Array.from({ length: Math.ceil(EVENTS / BATCH) }, (_, batch) => batchOf(batch * BATCH))
  const batches = eventBatches.map((events) => JSON.stringify({ events }))
  const lines = eventBatches.flat().map((event) => JSON.stringify(event)).join('\n')
  const bound = zlib.deflateRawSync(lines).length / EVENTS
  console.log(`eventstore-portal: ${EVENTS.toLocaleString('en')} log events in ${BATCH}-event batches, one connection; bound: JSON lines deflated ${bound.toFixed(1)} B/event`)
  for (const store of STORES) {
    const database = await createTestDatabase('sqlite')
    const portal = await startTestPortalOn('sqlite', database, { EVENT_STORE: store, INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '10000000', LOG_LEVEL: 'warn' }, { checkResponses: false })
    const project = await createProject(portal)
    const began = performance.now()
    for (const body of batches) {
      const response = await ingest(portal, project, body)
      if (response.status !== 200) throw new Error(`ingest: ${response.status} ${response.text}`)
    }
    const seconds = (performance.now() - began) / 1000
    await portal.close()
    const sizes = fileSizes(database.dataDir)
    const bytes = sizes.reduce((sum, [, size]) => sum + size, 0)
    const files = sizes.map(([name, size]) => `${name} ${(size / EVENTS).toFixed(1)}`)
    console.log(`EVENT_STORE=${store.padEnd(6)} ${Math.round(EVENTS / seconds).toLocaleString('en').padStart(7)} ev/s (one connection)  ${(bytes / EVENTS).toFixed(1)} B/event for the data folder after a clean stop (${files.join(', ')})`)
    await database.drop()
  }
}
