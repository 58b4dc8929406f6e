// Alerts: BENCH_ALERTS_RULES rules (default 1,000) of mixed signals at a 60 s interval over BENCH_ALERTS_LOG_EVENTS log
// events (default 10,000,000) and BENCH_ALERTS_OTHER_EVENTS (default 100,000) of errors, spans, metrics and deploys,
// spread over 7 days. Prints first the ingest rounds' load against a bare server (the machine's speed in this run),
// then, each beside its bound: one evaluation cycle of every rule, with its CPU; ingest of realistic logs over
// loopback, from a load generator process, with and without cycles running (BENCH_ALERTS_INGEST_ROUNDS runs of each,
// default 5, in turns; the medians); threshold
// crossing (the ingest's 200) to the notification at a loopback receiver, for interval rules and for event-driven
// ones (a new error group); 7-day backtests of log rules (by level, by text) and of an error rule.
// TEST_DATABASES=sqlite (or postgres) narrows the databases.
import fs from 'node:fs'
import { sql } from 'kysely'
import { newEventId } from '../src/ids.ts'
import type { PortalContext } from '../src/context.ts'
import { moduleByType } from '../src/modules/registry.ts'
import { writeEvents, type AcceptedEvent } from '../src/modules/write-events.ts'
import { alertDb } from '../src/alerts/tables.ts'
import { createProject, DIALECTS, event, ingest, type Dialect, startTestPortal, type TestPortal, type TestProject } from '../test/support/portal.ts'
import { startReceiver } from '../test/webhooks/receiver.ts'
import { withBaseline } from './ingest.ts'
import { runLoad } from './load-generator.ts'

const RULES = Number(process.env.BENCH_ALERTS_RULES ?? 1_000)
const LOG_EVENTS = Number(process.env.BENCH_ALERTS_LOG_EVENTS ?? 10_000_000)
const OTHER_EVENTS = Number(process.env.BENCH_ALERTS_OTHER_EVENTS ?? 100_000)
const INGEST_SECONDS = Number(process.env.BENCH_ALERTS_INGEST_SECONDS ?? 10)
/** ingest runs without and with cycles, taken in turns; their medians are compared */
const INGEST_ROUNDS = Number(process.env.BENCH_ALERTS_INGEST_ROUNDS ?? 5)
const LATENCY_SAMPLES = Number(process.env.BENCH_ALERTS_LATENCY_SAMPLES ?? 20)
const SPAN_MS = 7 * 86_400_000
const ROWS_PER_TRANSACTION = 5_000
const INTERVAL_S = 60
const LATENCY_INTERVAL_S = 10

const BOUNDS = { cycleMs: 10_000, ingestSlowdown: 0.1, intervalLatencyMs: (LATENCY_INTERVAL_S + 5) * 1000, eventLatencyMs: 2_000, backtestMs: 2_000 }

function payloadOf(type: string, i: number): Record<string, unknown> {
  switch (type) {
    case 'log':
      return { level: ['info', 'info', 'warn', 'error'][i % 4], message: `order ${i % 9973} created`, module: `module-${i % 20}`, service: `svc-${i % 10}` }
    case 'error':
      return { name: 'TypeError', message: `cart ${i % 500} is undefined`, environment: 'production', release: `1.${i % 5}` }
    case 'trace':
      return { traceId: `t${i}`, spanId: `s${i}`, serviceName: `svc-${i % 10}`, name: `GET /${i % 30}`, durationMs: (i * 37) % 2000 }
    case 'performance':
      return { metric: 'web.lcp', value: (i * 13) % 5000, service: `svc-${i % 10}` }
    default:
      return { service: `svc-${i % 10}`, environment: 'production', status: i % 10 === 0 ? 'failed' : 'succeeded', version: `1.${i}` }
  }
}

/** Writes `count` events of `type` spread over the last 7 days, as ingest writes them. */
async function seed(ctx: PortalContext, projectId: string, type: string, count: number, now: number): Promise<void> {
  const module = moduleByType.get(type)!
  for (let first = 0; first < count; first += ROWS_PER_TRANSACTION) {
    const events: AcceptedEvent[] = []
    for (let i = first; i < Math.min(count, first + ROWS_PER_TRANSACTION); i++) {
      const ts = now - SPAN_MS + Math.floor((i / count) * SPAN_MS)
      const data = payloadOf(type, i)
      events.push({ module, event: { id: newEventId(ts), projectId, ts, receivedAt: ts, data }, dataJson: JSON.stringify(data) })
    }
    await ctx.storage.db.transaction().execute((trx) => writeEvents(trx, ctx, events))
  }
}

const MIXED_RULES = [
  { signal: 'logs.count', filters: { level: 'error' }, condition: { op: 'above', critical: 1e12 } },
  { signal: 'logs.count', filters: { module: 'module-3' }, by: 'level', condition: { op: 'above', critical: 1e12 } },
  { signal: 'logs.count', filters: { q: 'created' }, condition: { op: 'above', critical: 1e12 } },
  { signal: 'errors.events', filters: { environment: 'production' }, condition: { op: 'above', critical: 1e12 } },
  { signal: 'traces.duration', aggregate: 'p95', by: 'service', condition: { op: 'above', critical: 1e12 } },
  { signal: 'traces.error_rate', condition: { op: 'above', critical: 101 } },
  { signal: 'performance.metric', filters: { metric: 'web.lcp' }, aggregate: 'p99', condition: { op: 'above', critical: 1e12 } },
  { signal: 'deploys.failed', by: 'service', condition: { op: 'above', critical: 1e12 } },
  { signal: 'webhooks.failure_rate', condition: { op: 'above', critical: 101 } },
  { signal: 'audit.actions', filters: { action: 'project.*' }, condition: { op: 'above', critical: 1e12 } },
]

async function createRules(t: TestPortal, project: TestProject): Promise<void> {
  for (let i = 0; i < RULES; i++) {
    const mixed = MIXED_RULES[i % MIXED_RULES.length]
    const res = await t.request('POST', '/api/alerts/rules', { token: t.adminToken, body: { projectId: project.id, name: `bench ${i}`, windowSeconds: 300 * (1 + (i % 12)), intervalSeconds: INTERVAL_S, ...mixed } })
    if (res.status !== 201) throw new Error(`rule: ${res.status} ${res.text}`)
  }
}

/** Makes every rule due and waits until each has applied a window ending after that moment: one cycle. */
async function cycle(t: TestPortal): Promise<number> {
  const db = alertDb(t.portal.ctx.storage)
  const started = Date.now()
  await db.updateTable('alert_rules').set({ next_evaluation_at: started }).execute()
  for (;;) {
    const behind = await db.selectFrom('alert_rules').select((eb) => eb.fn.countAll().as('n')).where('evaluated_through', '<', started).executeTakeFirstOrThrow()
    if (Number(behind.n) === 0) return Date.now() - started
    // each poll is a count over the rules (a few ms on PostgreSQL), which the "with cycles" ingest shares the cores with
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** CPU-seconds (user and system) of each PostgreSQL server process so far, by process id, from /proc. */
function postgresCpuSeconds(): Map<string, number> {
  const byPid = new Map<string, number>()
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue // ended since the listing
    }
    const close = stat.lastIndexOf(')')
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue
    const fields = stat.slice(close + 2).split(' ')
    byPid.set(pid, (Number(fields[11]) + Number(fields[12])) / 100) // USER_HZ
  }
  return byPid
}

/** One cycle, with the CPU it took: of this process (the portal and this bench's polling) and of PostgreSQL's. */
async function measuredCycle(t: TestPortal): Promise<{ ms: number; portalCpuS: number; postgresCpuS: number }> {
  const [cpu, postgres] = [process.cpuUsage(), postgresCpuSeconds()]
  const ms = await cycle(t)
  const used = process.cpuUsage(cpu)
  // a process that ended meanwhile is not counted; one that started counts whole
  const postgresCpuS = [...postgresCpuSeconds()].reduce((sum, [pid, seconds]) => sum + seconds - (postgres.get(pid) ?? 0), 0)
  return { ms, portalCpuS: (used.user + used.system) / 1e6, postgresCpuS }
}

/** Ingest of realistic logs from a load generator in its own process (bench/load-generator.ts), while `during` runs again and again. */
async function ingestRate(t: TestPortal, project: TestProject, during: () => Promise<unknown>, seconds = INGEST_SECONDS): Promise<number> {
  let stop = false
  const background = (async () => {
    while (!stop) await during()
  })()
  try {
    const load = await runLoad({ url: t.url, key: project.key, secret: project.webhookSecret, seconds, batchSize: 100, connections: 16, bodies: 2000 })
    if (load.errors > 0 || load.non2xx > 0) throw new Error(`ingest: ${load.non2xx} non-2xx answers, ${load.errors} connection errors`)
    return load.eventsPerSecond
  } finally {
    stop = true
    await background
  }
}

function median(samples: number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]
}

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)]
}

/** Ingest's 200 to the notification's arrival, per sample: each sample crosses its own rule's threshold. */
async function crossingLatency(t: TestPortal, project: TestProject, kind: 'interval' | 'event'): Promise<number[]> {
  const receiver = await startReceiver()
  try {
    const endpoint = await t.request('POST', '/api/webhooks/endpoints', { token: t.adminToken, body: { projectId: project.id, url: receiver.url(`/${kind}`), eventTypes: ['alert.firing'] } })
    const latencies: number[] = []
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const tag = `cross-${kind}-${i}-${Date.now()}`
      const rule =
        kind === 'interval'
          ? { signal: 'logs.count', filters: { level: tag }, intervalSeconds: LATENCY_INTERVAL_S }
          : { signal: 'errors.new_group', filters: { environment: tag }, intervalSeconds: 86_400 }
      const created = await t.request('POST', '/api/alerts/rules', { token: t.adminToken, body: { projectId: project.id, name: tag, windowSeconds: 600, condition: { op: 'above', critical: 0 }, targets: { endpointIds: [endpoint.body.id] }, ...rule } })
      if (created.status !== 201) throw new Error(created.text)
      // a random phase against the interval, as a real crossing has
      await new Promise((resolve) => setTimeout(resolve, kind === 'interval' ? Math.random() * LATENCY_INTERVAL_S * 1000 : 500))
      const calls = receiver.calls.length
      const sent =
        kind === 'interval'
          ? await ingest(t, project, [event('log', { level: tag, message: 'crossing' })])
          : await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'BenchError', message: tag, environment: tag, fingerprint: [tag] } })
      const answeredAt = Date.now()
      if (sent.status >= 300) throw new Error(sent.text)
      while (receiver.calls.length === calls) await new Promise((resolve) => setTimeout(resolve, 10))
      latencies.push(receiver.calls[calls].at - answeredAt)
    }
    return latencies
  } finally {
    await receiver.close()
  }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await run()
  return performance.now() - started
}

async function benchDialect(dialect: Dialect): Promise<void> {
  const t = await startTestPortal(dialect, { LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000' }, { checkResponses: false })
  const line = (what: string, value: string, bound: string, ok: boolean) => console.log(`  ${dialect.padEnd(8)} ${what.padEnd(44)} ${value.padStart(12)}   bound ${bound} ${ok ? 'ok' : 'EXCEEDED'}`)
  try {
    const project = await createProject(t, 'alerts bench')
    const now = Date.now()
    const seeding = performance.now()
    await seed(t.portal.ctx, project.id, 'log', LOG_EVENTS, now)
    for (const type of ['error', 'trace', 'performance', 'deploy']) await seed(t.portal.ctx, project.id, type, OTHER_EVENTS, now)
    console.log(`  ${dialect.padEnd(8)} seeded ${LOG_EVENTS} logs and ${OTHER_EVENTS} each of errors, spans, metrics, deploys over 7 days in ${((performance.now() - seeding) / 1000).toFixed(0)} s`)
    // Seven days written in minutes: on PostgreSQL, autovacuum would have set the visibility map and the planner's
    // statistics many times over by now (index-only scans read no heap page only where it has).
    if (dialect === 'postgres') await sql`vacuum analyze`.execute(t.portal.ctx.storage.db)
    await createRules(t, project)
    await cycle(t) // the first cycle also warms the caches
    const { ms: cycleMs, portalCpuS, postgresCpuS } = await measuredCycle(t)
    line(`evaluation cycle, ${RULES} rules`, `${cycleMs} ms`, `< ${BOUNDS.cycleMs} ms`, cycleMs < BOUNDS.cycleMs)
    // The share of the two cores a cycle takes while it runs is about how much slower ingest gets beside cycles run back to back.
    const share = (portalCpuS + postgresCpuS) / (2 * (cycleMs / 1000))
    console.log(`  ${dialect.padEnd(8)}   its CPU: ${portalCpuS.toFixed(2)} s portal${dialect === 'postgres' ? ` + ${postgresCpuS.toFixed(2)} s PostgreSQL` : ''}, ${(share * 100).toFixed(1)} % of 2 cores over the cycle`)
    // On the seeded folder, written in time order as logs arrive: the ingest rounds below send realistic logs whose
    // times sweep the last 7 days in every round, out of the stored order, which DuckDB's zone maps on ts then skip less.
    for (const [what, rule] of [
      ['7-day backtest, log rule', { signal: 'logs.count', filters: { level: 'error' } }],
      // every message of the 7 days is matched against the text: no summary holds it
      ['7-day backtest, log text rule', { signal: 'logs.count', filters: { q: 'created' } }],
      ['7-day backtest, error rule', { signal: 'errors.events', filters: { environment: 'production' } }],
    ] as const) {
      const ms = await timed(async () => {
        const res = await t.request('POST', '/api/alerts/preview', { token: t.adminToken, body: { projectId: project.id, range: '7d', rule: { name: 'bt', windowSeconds: 3600, intervalSeconds: 60, condition: { op: 'above', critical: 10 }, ...rule } } })
        if (res.status !== 200) throw new Error(res.text)
      })
      line(what, `${ms.toFixed(0)} ms`, `< ${BOUNDS.backtestMs} ms`, ms < BOUNDS.backtestMs)
    }
    const pause = () => new Promise((resolve) => setTimeout(resolve, 100))
    // the process's first ingest over HTTP warms its path up: measured, it came out below the "with cycles" one
    await ingestRate(t, project, pause, 3)
    // In turns, and the medians, so that the machine's drift falls on both sides alike.
    const quietRates: number[] = []
    const busyRates: number[] = []
    for (let round = 0; round < INGEST_ROUNDS; round++) {
      quietRates.push(await ingestRate(t, project, pause))
      busyRates.push(await ingestRate(t, project, () => cycle(t)))
    }
    const [quiet, busy] = [median(quietRates), median(busyRates)]
    const slowdown = (quiet - busy) / quiet
    line('ingest without / with cycles running, medians', `${quiet.toFixed(0)} / ${busy.toFixed(0)} ev/s`, `≤ ${BOUNDS.ingestSlowdown * 100} % slower`, slowdown <= BOUNDS.ingestSlowdown)
    console.log(`  ${dialect.padEnd(8)}   in turns, ev/s: ${quietRates.map((rate, round) => `${rate.toFixed(0)} / ${busyRates[round].toFixed(0)}`).join(', ')}`)
    await alertDb(t.portal.ctx.storage).updateTable('alert_rules').set({ enabled: 0 }).execute()
    const intervalP99 = p99(await crossingLatency(t, project, 'interval'))
    line(`crossing → receiver, ${LATENCY_INTERVAL_S} s interval, p99`, `${intervalP99} ms`, `< ${BOUNDS.intervalLatencyMs} ms`, intervalP99 < BOUNDS.intervalLatencyMs)
    const eventP99 = p99(await crossingLatency(t, project, 'event'))
    line('new error group → receiver, p99', `${eventP99} ms`, `< ${BOUNDS.eventLatencyMs} ms`, eventP99 < BOUNDS.eventLatencyMs)
    const stored = Number((await sql<{ n: number }>`select count(*) as n from log_events`.execute(t.portal.ctx.storage.eventsOf('log_events').db)).rows[0].n)
    console.log(`  ${dialect.padEnd(8)} (${stored} log events stored at the end)`)
  } finally {
    await t.close()
  }
}

export async function run(): Promise<void> {
  // This machine's speed in the same run, since it drifts: the rounds' load against a bare server that only checks and answers.
  const bare = await withBaseline((target) => runLoad({ url: target.url, key: target.key, secret: target.secret, seconds: INGEST_SECONDS, batchSize: 100, connections: 16, bodies: 2000 }))
  console.log(`  bound: the ingest rounds' load against a bare Node server (bench/baseline-server.ts): ${bare.eventsPerSecond.toFixed(0)} ev/s`)
  for (const dialect of DIALECTS) await benchDialect(dialect)
}
