// Ingest throughput on the realistic log workload (workload/realistic-logs.ts, sent by a load generator in
// its own process): the portal (SQLite and PostgreSQL) against a baseline server that does only the
// unavoidable work, for batches of 1, 10 and 100 events, with the CPU each event costs the portal's process
// (every thread); then p99 latency at half the portal's 100-event throughput, alone and beside `q=` text
// searches; then SQLite alone storing the same rows, which bounds what any portal on it can reach.
// Loopback only; every run is bounded by BENCH_SECONDS.
import { fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import SQLite from '../src/storage/sqlite/better-sqlite3.ts'
import { newEventId } from '../src/ids.ts'
import { allMigrations } from '../src/portal.ts'
import { migrate } from '../src/storage/migrations.ts'
import { openStorage } from '../src/storage/open-storage.ts'
import { createTestDatabase, type Dialect } from '../test/support/portal.ts'
import { freePort, killPortal, spawnPortal } from '../test/support/process.ts'
import { runLoad } from './load-generator.ts'
import { RARE_WORD, realisticLogs } from './workload/realistic-logs.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = 16
const BATCH_SIZES = [1, 10, 100]
const ADMIN = `pat_${'a'.repeat(40)}`

export interface Target {
  url: string
  key: string
  secret: string
  /** the key's project, on a portal (not the baseline) */
  projectId?: string
  /** the serving process, whose CPU per event is measured */
  pid: number
}

/**
 * SQLite alone, no HTTP, no validation: better-sqlite3 inserting the rows the portal stores for these
 * 100-event batches (the log table with its indexes and the hourly level counts), 16 batches a
 * transaction as group commit shares them, fsynced as the portal does. Returns rows per second.
 */
async function sqliteStorageCeiling(): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-bench-ceiling-'))
  const file = path.join(dataDir, 'portal.db')
  const storage = await openStorage(`sqlite:${file}`, { poolSize: 1, queryTimeoutMs: 0, sqliteSynchronous: 'full' })
  await migrate(storage, allMigrations)
  await storage.close()
  const database = new SQLite(file)
  try {
    database.pragma('journal_mode = WAL')
    database.pragma('synchronous = full')
    const insertLogs = database.prepare(
      `insert into log_events (id, project_id, ts, received_at, data, level, module, message) values ${Array(100).fill('(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    )
    const countLevels = database.prepare(
      'insert into log_level_hours (project_id, hour, level_key, level, events) values (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) on conflict do update set events = events + excluded.events',
    )
    const batchesOfEvents = Array.from({ length: 64 }, (_, batch) => realisticLogs(100, { first: batch * 100, total: 6400 }))
    const writeBatches = database.transaction((batches: number) => {
      for (let batch = 0; batch < batches; batch++) {
        const now = Date.now()
        const values: unknown[] = []
        for (const { data } of batchesOfEvents[batch % batchesOfEvents.length]) {
          values.push(newEventId(now), 'prj_bench', now, now, JSON.stringify(data), data.level, data.module, data.message)
        }
        insertLogs.run(values)
        const hour = Math.floor(now / 3_600_000) * 3_600_000
        countLevels.run('prj_bench', hour, '"warn"', 'warn', 10, 'prj_bench', hour, '"info"', 'info', 90)
      }
    })
    let rows = 0
    const started = performance.now()
    while (performance.now() - started < SECONDS * 1000) {
      writeBatches(16)
      rows += 1600
    }
    return Math.round((rows / (performance.now() - started)) * 1000)
  } finally {
    database.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function measure(target: Target, size: number, requestsPerSecond?: number) {
  const result = await runLoad(
    { url: target.url, key: target.key, secret: target.secret, seconds: SECONDS, batchSize: size, connections: CONNECTIONS, requestsPerSecond, bodies: Math.max(200, 200_000 / size) },
    target.pid,
  )
  if (result.errors > 0) throw new Error(`${result.errors} connection errors at batch ${size}`)
  // Only 2xx answers count: a 503 from load shedding is the portal protecting itself, not throughput.
  return { ...result, shed: result.non2xx }
}

/** Text searches as a person makes them: the newest logs holding a word 1 % of messages hold. */
async function searchLogs(target: Target) {
  const result = await autocannon({
    url: `${target.url}/api/modules/logs/events?project_id=${target.projectId}&q=${RARE_WORD}&limit=50`,
    connections: 2,
    duration: SECONDS,
    headers: { authorization: `Bearer ${ADMIN}` },
  })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`log search: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { perSecond: Math.round(result['2xx'] / result.duration), p50: result.latency.p50 }
}

export async function withBaseline<T>(run: (target: Target) => Promise<T>): Promise<T> {
  const port = await freePort()
  const secret = 'whsec_baseline'
  const child = fork(path.join(import.meta.dirname, 'baseline-server.ts'), { env: { ...process.env, PORT: String(port), BENCH_SECRET: secret }, execArgv: ['--import', 'tsx'] })
  await new Promise((resolve) => child.once('message', resolve))
  try {
    return await run({ url: `http://127.0.0.1:${port}`, key: 'unused', secret, pid: child.pid! })
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
    return await run({ url: portal.url, key: key.key, secret: key.webhookSecret, projectId: project.id, pid: portal.child.pid! })
  } finally {
    await killPortal(portal, 'SIGTERM')
    await database.drop()
  }
}

export async function run() {
  const baseline: Record<number, { eventsPerSecond: number; cpuMicrosPerEvent?: number }> = {}
  await withBaseline(async (target) => {
    for (const size of BATCH_SIZES) baseline[size] = await measure(target, size)
  })
  console.log(`ingest: realistic logs (bench/workload/realistic-logs.ts) from a load generator process, ${CONNECTIONS} connections, ${SECONDS} s per run, loopback`)
  console.log('database   batch  baseline ev/s  µs/ev  portal ev/s  µs/ev (all threads)  ratio  p50 ms  p99 ms  non-2xx  peak RSS MiB')
  const cell = (value: number | undefined, width: number, digits = 0) => (value === undefined ? '' : value.toFixed(digits)).padStart(width)
  for (const dialect of (process.env.BENCH_INGEST_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as Dialect[]) {
    await withPortal(dialect, async (target) => {
      let full = 0
      for (const size of BATCH_SIZES) {
        const result = await measure(target, size)
        if (size === 100) full = result.eventsPerSecond
        const ratio = (result.eventsPerSecond / baseline[size].eventsPerSecond).toFixed(2)
        console.log(
          `${dialect.padEnd(10)} ${String(size).padStart(5)}  ${cell(baseline[size].eventsPerSecond, 13)}  ${cell(baseline[size].cpuMicrosPerEvent, 5, 1)}  ${cell(result.eventsPerSecond, 11)}  ${cell(result.cpuMicrosPerEvent, 19, 1)}  ${ratio.padStart(5)}  ${cell(result.p50, 6)}  ${cell(result.p99, 6)}  ${cell(result.shed, 7)}  ${cell(result.peakRssMiB, 12)}`,
        )
      }
      const halfRate = Math.max(1, Math.round(full / 100 / 2))
      const half = await measure(target, 100, halfRate)
      console.log(`${dialect.padEnd(10)} at half load (${Math.round(full / 2)} ev/s offered in 100-event batches): p50 ${half.p50} ms, p99 ${half.p99} ms, ${half.shed} non-2xx`)
      const [withReads, reads] = await Promise.all([measure(target, 100, halfRate), searchLogs(target)])
      console.log(
        `${dialect.padEnd(10)} the same while 2 connections search the logs for q=${RARE_WORD} (${reads.perSecond} reads/s, p50 ${reads.p50} ms): ingest p50 ${withReads.p50} ms, p99 ${withReads.p99} ms, ${withReads.shed} non-2xx`,
      )
    })
  }
  const ceiling = await sqliteStorageCeiling()
  console.log(
    `sqlite     storage alone (better-sqlite3 inserting the same rows, no HTTP or validation, one thread): ${ceiling} rows/s = ${(ceiling / baseline[100].eventsPerSecond).toFixed(2)} of the baseline's 100-event rate`,
  )
}
