import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { killPortal, spawnPortal, type PortalProcess } from '../test/support/process.ts'

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ADMIN_TOKEN = `pat_${randomBytes(24).toString('hex')}`
const CAPTURES = Number(process.env.BENCH_INSTANCES_CAPTURES ?? 3_000)
/** distinct errors of the project: captures of one error conflict by nature, of different errors they need not */
const ERRORS = 20
const CONNECTIONS = 48
const ROUNDS = Number(process.env.BENCH_INSTANCES_ROUNDS ?? 3)
const TIME_LIMIT_MS = 60_000

/**
 * Captures per second of one project through one portal, and through three portals sharing one
 * PostgreSQL database, each portal its own process (as three instances behind a load balancer), the load
 * from a fourth on loopback. The bound, measured in the same run: three projects, one per portal, through
 * the three — the same work with nothing in common but the database, so nothing that grouping one
 * project's errors locks. Scenarios take turns over ROUNDS rounds; the median is the figure. Deadlocks
 * PostgreSQL detected during the run are counted from pg_stat_database.
 */
export async function run() {
  const database = `portal_bench_${randomBytes(6).toString('hex')}`
  await adminQuery(`create database ${database}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-bench-instances-'))
  const env = {
    DATABASE_URL: url.toString(),
    PORTAL_DATA_DIR: dataDir,
    PORTAL_BOOTSTRAP_TOKEN: ADMIN_TOKEN,
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
    // captures count against the project's ingest limits; this measures what the portals can take
    INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000',
    INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000',
  }
  const portals: PortalProcess[] = []
  const load = startLoadProcess()
  try {
    // One at a time: they migrate the one database in turn.
    for (let i = 0; i < 3; i++) portals.push(await spawnPortal(env, { timeoutMs: 180_000 }))
    const urls = portals.map((portal) => portal.url)
    const deadlocksBefore = await deadlocks(url.toString())
    const figures: Record<string, number[]> = { one: [], three: [], bound: [] }
    const lockWaits: Record<string, number[]> = { one: [], three: [], bound: [] }
    const sampled = async <T>(scenario: string, measuring: Promise<T>) => {
      const sampler = sampleLockWaits(url.toString())
      try {
        return await measuring
      } finally {
        lockWaits[scenario].push(await sampler.stop())
      }
    }
    await measure(load, urls.slice(0, 1), 1, 'warm-up')
    for (let round = 1; round <= ROUNDS; round++) {
      figures.one.push(await sampled('one', measure(load, urls.slice(0, 1), 1, `round ${round}, one project through one portal`)))
      figures.three.push(await sampled('three', measure(load, urls, 1, `round ${round}, one project through three portals`)))
      figures.bound.push(await sampled('bound', measure(load, urls, 3, `round ${round}, three projects (one per portal) through three portals`)))
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
    const [one, three, bound] = [median(figures.one), median(figures.three), median(figures.bound)]
    console.log(
      `captures/s of one project, median of ${ROUNDS} rounds (${ERRORS} errors, ${CONNECTIONS} connections, committed when answered): ` +
        `through one portal ${one}, through three ${three} (${(three / one).toFixed(2)}× one; target >= 1.00), ` +
        `bound (three projects through three) ${bound} (one project through three is ${(three / bound).toFixed(2)} of it)`,
    )
    const share = (values: number[]) => `${(median(values) * 100).toFixed(1)} %`
    console.log(
      `busy database connections waiting for a lock held by another transaction (pg_stat_activity, sampled every 100 ms), median of rounds: ` +
        `one portal ${share(lockWaits.one)}, one project through three ${share(lockWaits.three)}, bound ${share(lockWaits.bound)}`,
    )
    console.log(`deadlocks PostgreSQL detected during the run: ${(await deadlocks(url.toString())) - deadlocksBefore}   target 0`)
  } finally {
    load.close()
    for (const portal of portals) await killPortal(portal, 'SIGTERM')
    await adminQuery(`drop database if exists ${database} with (force)`)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** Sends CAPTURES captures spread evenly over `urls`, into `projects` new projects (project i through portal i); returns captures per second. */
async function measure(load: LoadProcess, urls: string[], projects: number, name: string): Promise<number> {
  const keys = await Promise.all(Array.from({ length: projects }, (_, i) => createProjectKey(urls[i], `${name} ${i}`)))
  const targets = urls.map((url, i) => ({ url, key: keys[i % projects] }))
  const bodies = Array.from({ length: ERRORS }, (_, error) => JSON.stringify(captureBody(error)))
  const result = await load.send(targets, bodies, CAPTURES)
  const perSecond = Math.round((result.ok / result.ms) * 1000)
  console.log(`${name}: ${result.ok} answered 201 (${result.failed} other) in ${(result.ms / 1000).toFixed(2)} s: ${perSecond} captures/s`)
  return perSecond
}

async function createProjectKey(url: string, name: string): Promise<string> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }
  const project = await (await fetch(`${url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name }) })).json()
  const key = await (await fetch(`${url}/api/projects/${project.id}/keys`, { method: 'POST', headers, body: '{}' })).json()
  return key.key as string
}

/** A capture of error `error`: its stack's innermost in-app function names it. */
function captureBody(error: number) {
  return {
    name: 'TypeError',
    message: `Cannot read properties of undefined (reading 'id') for order ${100000 + error}`,
    stack: [
      'TypeError: Cannot read properties of undefined',
      `    at handler${error} (/srv/app/src/handlers/h${error}.ts:41:13)`,
      '    at validate (/srv/app/src/validation.ts:120:9)',
      '    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)',
    ].join('\n'),
    environment: 'production',
    release: 'r1842',
  }
}

async function deadlocks(url: string): Promise<number> {
  // Backends report their counters to the shared statistics about once a second.
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query('select deadlocks from pg_stat_database where datname = current_database()')
    return Number(result.rows[0].deadlocks)
  } finally {
    await client.end()
  }
}

/**
 * The share of the database's busy connections that wait for a heavyweight lock (a row another
 * transaction updated or locked, until it commits), sampled until stopped: the queue this bench is about,
 * measured apart from the CPU the machine has to spare.
 */
function sampleLockWaits(url: string) {
  const client = new pg.Client({ connectionString: url })
  let [busy, waiting, stopped] = [0, 0, false]
  const waitedOn = new Map<string, number>()
  const sampling = (async () => {
    await client.connect()
    while (!stopped) {
      const { rows } = await client.query(
        `select state = 'active' as busy, wait_event_type = 'Lock' as waiting, wait_event
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      )
      for (const row of rows) {
        if (!row.busy) continue
        busy++
        if (!row.waiting) continue
        waiting++
        waitedOn.set(row.wait_event, (waitedOn.get(row.wait_event) ?? 0) + 1)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await client.end()
  })()
  return {
    async stop() {
      stopped = true
      await sampling
      // which lock: `transactionid`/`tuple` are rows another transaction holds, `extend` a table growing
      console.log(`  lock waits by wait_event: ${[...waitedOn].sort((a, b) => b[1] - a[1]).map(([name, n]) => `${name} ${n}`).join(', ') || 'none'}`)
      return busy === 0 ? 0 : waiting / busy
    },
  }
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

// The load comes from a process of its own, started once and sent each round as a line, so that it is warm.
// Connection i goes to target i modulo the targets: the captures spread evenly over the portals.
const LOAD_SCRIPT = `
const { Pool } = require(process.env.UNDICI)
const { createInterface } = require('node:readline')
createInterface({ input: process.stdin }).on('line', async (line) => {
  const { targets, bodies, total, connections, timeLimitMs } = JSON.parse(line)
  const pools = targets.map((target) => new Pool(target.url, { connections: Math.ceil(connections / targets.length) }))
  let sent = 0, ok = 0, failed = 0
  const started = performance.now()
  async function lane(index) {
    const pool = pools[index % targets.length]
    const key = targets[index % targets.length].key
    while (sent < total && performance.now() - started < timeLimitMs) {
      const body = bodies[sent++ % bodies.length]
      const response = await pool.request({ path: '/api/errors/capture', method: 'POST', headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' }, body })
      await response.body.text()
      if (response.statusCode === 201) ok++
      else failed++
    }
  }
  await Promise.all(Array.from({ length: connections }, (_, index) => lane(index)))
  const ms = performance.now() - started
  await Promise.all(pools.map((pool) => pool.close()))
  process.stdout.write(JSON.stringify({ ok, failed, ms }) + '\\n')
})
`

type LoadResult = { ok: number; failed: number; ms: number }

function startLoadProcess() {
  const child = spawn(process.execPath, ['-e', LOAD_SCRIPT], {
    env: { ...process.env, UNDICI: createRequire(import.meta.url).resolve('undici') },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const waiting: { resolve: (result: LoadResult) => void; reject: (error: Error) => void }[] = []
  child.stdout.setEncoding('utf8')
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.resolve(JSON.parse(line)))
  const failAll = (error: Error) => {
    for (const round of waiting.splice(0)) round.reject(error)
  }
  child.once('error', failAll)
  child.once('exit', (code) => failAll(new Error(`load process exited with ${code}`)))
  return {
    send(targets: { url: string; key: string }[], bodies: string[], total: number): Promise<LoadResult> {
      child.stdin.write(JSON.stringify({ targets, bodies, total, connections: CONNECTIONS, timeLimitMs: TIME_LIMIT_MS }) + '\n')
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
    },
    close() {
      child.stdin.end()
      child.kill()
    },
  }
}

type LoadProcess = ReturnType<typeof startLoadProcess>
