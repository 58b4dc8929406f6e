// PostgreSQL on the log workload (issue 18): the portal ingesting 100-event batches of log events
// (level, module, message, two fields) over 16 connections, against the bare bound measured in the same run:
// 16 clients of this process inserting the same rows into the same table (one multi-row INSERT and a
// COMMIT per 100 events, synchronous_commit on), no HTTP, no validation, no summaries. Rounds alternate
// portal and bare so that the shared machine's noise hits both. Then bytes per event on disk: the log table
// with its partitions and indexes, and the whole database's growth. BENCH_SECONDS (default 10) per round,
// BENCH_PGSTORE_ROUNDS (default 3). Loopback only.
import os from 'node:os'
import autocannon from 'autocannon'
import pg from 'pg'
import { hmacSha256Hex } from '../src/identity/secrets.ts'
import { newEventId } from '../src/ids.ts'
import { allMigrations } from '../src/portal.ts'
import { migrate } from '../src/storage/migrations.ts'
import { openStorage } from '../src/storage/open-storage.ts'
import { createTestDatabase } from '../test/support/portal.ts'
import { killPortal, spawnPortal } from '../test/support/process.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_PGSTORE_ROUNDS ?? 3)
const CONNECTIONS = 16
const BATCH = 100
const ADMIN = `pat_${'a'.repeat(40)}`

const LEVELS = ['info', 'info', 'info', 'info', 'debug', 'debug', 'warn', 'error', 'trace', 'fatal']
const logData = (i: number) => ({
  level: LEVELS[i % LEVELS.length],
  module: `module-${i % 20}`,
  message: `GET /api/orders/${1000 + i} answered 200 in ${i % 97} ms`,
  fields: { requestId: `req-${i}`, userId: i % 1000 },
})

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** Bytes of the log table (partitions and indexes) and of the whole database. */
async function sizes(client: pg.Client): Promise<{ logTable: number; database: number; events: number }> {
  const result = await client.query(`
    select (select coalesce(sum(pg_total_relation_size(relid)), 0) from pg_partition_tree('log_events')) as log_table,
           pg_database_size(current_database()) as database,
           (select count(*) from log_events) as events`)
  const row = result.rows[0]
  return { logTable: Number(row.log_table), database: Number(row.database), events: Number(row.events) }
}

async function portalRound(url: string, key: string, secret: string, round: number): Promise<{ rate: number; shed: number }> {
  const body = JSON.stringify({ events: Array.from({ length: BATCH }, (_, i) => ({ type: 'log', ts: new Date().toISOString(), data: logData(round * BATCH + i) })) })
  const result = await autocannon({
    url: `${url}/api/ingest`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-service-signature': hmacSha256Hex(secret, body) },
    body,
  })
  if (result.errors > 0) throw new Error(`${result.errors} connection errors`)
  // Only 2xx answers count: a 503 from load shedding is the portal protecting itself, not throughput.
  return { rate: Math.round((result['2xx'] / result.duration) * BATCH), shed: result.non2xx }
}

/** The bare bound: CONNECTIONS clients, each inserting BATCH rows a transaction for SECONDS. */
async function bareRound(clients: pg.Client[], projectId: string): Promise<number> {
  const columns = 8
  const placeholders = Array.from({ length: BATCH }, (_, row) => `(${Array.from({ length: columns }, (_, c) => `$${row * columns + c + 1}`).join(', ')})`).join(', ')
  const insert = `insert into log_events (id, project_id, ts, received_at, data, level, module, message) values ${placeholders}`
  let rows = 0
  const started = performance.now()
  await Promise.all(
    clients.map(async (client, c) => {
      let i = c * 1_000_000
      while (performance.now() - started < SECONDS * 1000) {
        const now = Date.now()
        const values: unknown[] = []
        for (let n = 0; n < BATCH; n++, i++) {
          // The row the portal stores: level, module and message in their columns only (src/storage/promoted-fields.ts).
          const { level, module, message, ...rest } = logData(i)
          values.push(newEventId(now), projectId, now, now, JSON.stringify(rest), level, module, message)
        }
        await client.query('begin')
        await client.query(insert, values)
        await client.query('commit')
        rows += BATCH
      }
    }),
  )
  return Math.round((rows / (performance.now() - started)) * 1000)
}

export async function run() {
  const portalDatabase = await createTestDatabase('postgres')
  const bareDatabase = await createTestDatabase('postgres')
  const bareStorage = await openStorage(bareDatabase.url, { poolSize: 2, queryTimeoutMs: 600_000, sqliteSynchronous: 'full' })
  await migrate(bareStorage, [...allMigrations, ...bareStorage.layoutMigrations])
  await bareStorage.close()
  const portal = await spawnPortal({
    DATABASE_URL: portalDatabase.url,
    PORTAL_DATA_DIR: portalDatabase.dataDir,
    PORTAL_BOOTSTRAP_TOKEN: ADMIN,
    LOG_LEVEL: 'warn',
    INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000000',
    INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '10000000',
  })
  const portalClient = new pg.Client({ connectionString: portalDatabase.url })
  const bareClients = Array.from({ length: CONNECTIONS }, () => new pg.Client({ connectionString: bareDatabase.url }))
  try {
    await portalClient.connect()
    await Promise.all(bareClients.map((client) => client.connect()))
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    const project = await (await fetch(`${portal.url}/api/projects`, { method: 'POST', headers, body: '{"name":"bench"}' })).json()
    const key = await (await fetch(`${portal.url}/api/projects/${project.id}/keys`, { method: 'POST', headers, body: '{}' })).json()
    const settings = await portalClient.query(`select current_setting('synchronous_commit') as sc, current_setting('fsync') as fs, current_setting('server_version') as v`)
    const emptyPortal = await sizes(portalClient)
    const emptyBare = await sizes(bareClients[0])
    console.log(
      `PostgreSQL ${settings.rows[0].v} (fsync=${settings.rows[0].fs}, synchronous_commit=${settings.rows[0].sc}), ${BATCH}-event log batches, ` +
        `${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s each, alternating; load average at start ${os.loadavg()[0].toFixed(1)}`,
    )
    const portalRates: number[] = []
    const bareRates: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const portalResult = await portalRound(portal.url, key.key, key.webhookSecret, round)
      portalRates.push(portalResult.rate)
      bareRates.push(await bareRound(bareClients, project.id))
      console.log(`  round ${round + 1}: portal ${portalResult.rate} ev/s (${portalResult.shed} non-2xx), bare INSERT ${bareRates.at(-1)} rows/s, load average ${os.loadavg()[0].toFixed(1)}`)
    }
    await portalClient.query('checkpoint')
    const portalSize = await sizes(portalClient)
    const bareSize = await sizes(bareClients[0])
    const perEvent = (bytes: number, events: number) => (events ? bytes / events : 0).toFixed(1)
    console.log(`ingest, median of ${ROUNDS}: portal ${median(portalRates)} ev/s (${portalRates.join(', ')}); bare bound ${median(bareRates)} rows/s (${bareRates.join(', ')}); ratio ${(median(portalRates) / median(bareRates)).toFixed(2)}`)
    console.log(
      `disk: portal ${perEvent(portalSize.logTable, portalSize.events)} B/event in log_events with indexes, ` +
        `${perEvent(portalSize.database - emptyPortal.database, portalSize.events)} B/event database growth (${portalSize.events} events); ` +
        `bare ${perEvent(bareSize.logTable, bareSize.events)} B/event in log_events, ${perEvent(bareSize.database - emptyBare.database, bareSize.events)} database growth`,
    )
    const tables = await portalClient.query(`
      select c.relname as name, pg_relation_size(c.oid) as bytes from pg_partition_tree('log_events') t
      join pg_index i on i.indrelid = t.relid join pg_class c on c.oid = i.indexrelid`)
    const byIndex = new Map<string, number>()
    for (const row of tables.rows) {
      const name = String(row.name).replace(/_p\d{8}|_default/, '')
      byIndex.set(name, (byIndex.get(name) ?? 0) + Number(row.bytes))
    }
    const heap = await portalClient.query(`select sum(pg_relation_size(relid)) as bytes from pg_partition_tree('log_events')`)
    console.log(`  heap ${perEvent(Number(heap.rows[0].bytes), portalSize.events)} B/event`)
    for (const [name, bytes] of [...byIndex].sort()) if (bytes > 0) console.log(`  ${name} ${perEvent(bytes, portalSize.events)} B/event`)
  } finally {
    await Promise.all(bareClients.map((client) => client.end().catch(() => {})))
    await portalClient.end().catch(() => {})
    await killPortal(portal, 'SIGTERM')
    await portalDatabase.drop()
    await bareDatabase.drop()
  }
}
