// The Loki, Tempo and Prometheus query APIs against the portal's own reads of the same data: 1,000,000 log
// events over 7 days and 100,000 traces of 5 spans, written as ingest writes them; then, from one run, the median
// time of each LogQL or TraceQL query beside the module read with the same filter.
// BENCH_QUERY_APIS_SCALE (default 1) scales the counts, BENCH_QUERY_APIS_LOGS sets the logs' alone (10000000 for the
// metric target at 10M); BENCH_QUERY_APIS_RUNS (default 15) the timed runs.
// TEST_DATABASES=sqlite (or postgres) narrows the databases. Loopback only; every loop is bounded.
import { sql } from 'kysely'
import { newEventId } from '../src/ids.ts'
import type { PortalContext } from '../src/context.ts'
import { writeEvents, type AcceptedEvent } from '../src/modules/write-events.ts'
import { moduleByType } from '../src/modules/registry.ts'
import { DIALECTS, createProject, startTestPortal, type Dialect, type TestPortal } from '../test/support/portal.ts'

const SCALE = Number(process.env.BENCH_QUERY_APIS_SCALE ?? 1)
const RUNS = Number(process.env.BENCH_QUERY_APIS_RUNS ?? 15)
const WARMUP_RUNS = 3
const LOG_COUNT = Number(process.env.BENCH_QUERY_APIS_LOGS ?? Math.round(1_000_000 * SCALE))
const TRACE_COUNT = Math.round(100_000 * SCALE)
const SPANS_PER_TRACE = 5
const ROWS_PER_TRANSACTION = 50_000
const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const END_MS = Date.UTC(2026, 10, 15)
const START_MS = END_MS - 7 * DAY_MS

let randomState = 1
function random(): number {
  randomState = (randomState * 1_103_515_245 + 12_345) % 2_147_483_648
  return randomState / 2_147_483_648
}
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]
const LEVELS = ['info', 'info', 'info', 'info', 'debug', 'debug', 'warn', 'error', 'trace', 'fatal']
const WORDS = ['order', 'payment', 'user', 'cache', 'timeout', 'retry', 'created', 'failed', 'queued', 'shipped', 'refund', 'login']

async function seed(ctx: PortalContext, type: string, projectId: string, count: number, payload: (i: number) => Record<string, unknown>) {
  const module = moduleByType.get(type)!
  for (let start = 0; start < count; start += ROWS_PER_TRANSACTION) {
    const accepted: AcceptedEvent[] = []
    for (let i = start; i < Math.min(count, start + ROWS_PER_TRANSACTION); i++) {
      const ts = START_MS + Math.floor((i / count) * 7 * DAY_MS)
      const data = payload(i)
      accepted.push({ module, event: { id: newEventId(ts), projectId, ts, receivedAt: ts, data }, dataJson: JSON.stringify(data) })
    }
    await ctx.storage.db.transaction().execute((trx) => writeEvents(trx, ctx, accepted))
  }
}

const logPayload = (i: number) => ({ level: pick(LEVELS), message: `${pick(WORDS)} ${pick(WORDS)} ${i % 9973} ${pick(WORDS)}`, module: `module-${i % 20}`, serviceName: `service-${i % 10}` })
const spanPayload = (i: number) => {
  const trace = Math.floor(i / SPANS_PER_TRACE)
  const root = i % SPANS_PER_TRACE === 0
  return {
    traceId: `trace-${trace}`,
    spanId: `span-${i}`,
    ...(root ? {} : { parentSpanId: `span-${trace * SPANS_PER_TRACE}` }),
    serviceName: `service-${trace % 10}`,
    name: `operation ${i % SPANS_PER_TRACE}`,
    durationMs: Math.round(random() * 500),
    status: { code: random() < 0.05 ? 'error' : 'unset' },
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

/**
 * The median times of two reads, taken in turns (the first of each turn alternating), so that neither has the
 * other's warm caches or the background work of the seeding to itself.
 */
async function timedPair(t: TestPortal, urls: [string, string], headers: Record<string, string>): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []]
  for (let run = 0; run < WARMUP_RUNS + RUNS; run++) {
    for (const which of run % 2 === 0 ? [0, 1] : [1, 0]) {
      const started = performance.now()
      const res = await t.request('GET', urls[which], { token: t.viewerToken, headers })
      const elapsed = performance.now() - started
      if (res.status !== 200) throw new Error(`${urls[which]}: ${res.status} ${res.text.slice(0, 300)}`)
      if (run >= WARMUP_RUNS) times[which].push(elapsed)
    }
  }
  return [median(times[0]), median(times[1])]
}

/** Pairs of the same question: a query API's form and the module read's, and the target of the query form. */
function pairsOf(projectId: string): { name: string; query: string; module: string; target?: number }[] {
  const ns = (ms: number) => `${ms}000000`
  const day = { start: ns(END_MS - DAY_MS), end: ns(END_MS) }
  const week = { start: ns(START_MS), end: ns(END_MS) }
  const iso = (ms: number) => new Date(ms).toISOString()
  const logql = (query: string, range: { start: string; end: string }, extra = '') => `/loki/api/v1/query_range?query=${encodeURIComponent(query)}&start=${range.start}&end=${range.end}&limit=50${extra}`
  return [
    { name: 'newest 50 of one module at one level', query: logql('{module="module-3", level="warn"}', week), module: `/api/modules/logs/events?project_id=${projectId}&module=module-3&level=warn&limit=50` },
    { name: 'newest 50 errors', query: logql('{level="error"}', week), module: `/api/modules/logs/events?project_id=${projectId}&level=error&limit=50` },
    {
      name: 'text search over 24 h',
      query: logql('{level=~".+"} |= "refund"', day),
      module: `/api/modules/logs/events?project_id=${projectId}&q=refund&from=${iso(END_MS - DAY_MS)}&to=${iso(END_MS)}&limit=50`,
    },
    {
      name: 'counts per level per hour over 7 days',
      query: `/loki/api/v1/query_range?query=${encodeURIComponent('sum by (level) (count_over_time({level=~".+"}[1h]))')}&start=${ns(START_MS + HOUR_MS)}&end=${ns(END_MS)}&step=3600`,
      module: `/api/modules/logs/histogram?project_id=${projectId}&from=${iso(START_MS)}&to=${iso(END_MS)}&bucket_seconds=3600`,
      target: 200,
    },
    {
      name: 'TraceQL first page: service, duration',
      query: `/tempo/api/search?q=${encodeURIComponent('{ resource.service.name = "service-3" && duration > 400ms }')}&limit=20`,
      module: `/api/traces?project_id=${projectId}&service=service-3&min_duration_ms=400&limit=20`,
      target: 100,
    },
    {
      name: 'TraceQL first page: errors',
      query: `/tempo/api/search?q=${encodeURIComponent('{ status = error }')}&limit=20`,
      module: `/api/traces?project_id=${projectId}&error=true&limit=20`,
      target: 100,
    },
  ]
}

async function benchDialect(dialect: Dialect): Promise<void> {
  const t = await startTestPortal(dialect, { LOG_LEVEL: 'warn' }, { checkResponses: false })
  try {
    const project = await createProject(t, 'bench')
    const started = performance.now()
    await seed(t.portal.ctx, 'log', project.id, LOG_COUNT, logPayload)
    await seed(t.portal.ctx, 'trace', project.id, TRACE_COUNT * SPANS_PER_TRACE, spanPayload)
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(t.portal.ctx.storage.db)
    console.log(`  ${dialect}: seeded ${LOG_COUNT} logs and ${TRACE_COUNT} traces in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    await t.request('GET', '/api/health').catch(() => undefined)
    const headers = { 'x-scope-orgid': project.id }
    for (const pair of pairsOf(project.id)) {
      const [queryMs, moduleMs] = await timedPair(t, [pair.query, pair.module], headers)
      const verdict = pair.target === undefined ? (queryMs <= moduleMs * 1.1 ? 'ok' : 'SLOWER') : queryMs <= pair.target ? 'ok' : 'OVER'
      console.log(
        `  ${dialect.padEnd(8)} ${pair.name.padEnd(40)} query API ${queryMs.toFixed(1).padStart(7)} ms   module read ${moduleMs.toFixed(1).padStart(7)} ms` +
          `${pair.target === undefined ? '' : `   (target ${pair.target} ms)`} ${verdict}`,
      )
    }
  } finally {
    await t.close()
  }
}

export async function run() {
  console.log(`${LOG_COUNT} log events over 7 days, ${TRACE_COUNT} traces of ${SPANS_PER_TRACE} spans, ${RUNS} timed runs per read (median over loopback HTTP)`)
  for (const dialect of DIALECTS) {
    randomState = 1
    await benchDialect(dialect)
  }
}
