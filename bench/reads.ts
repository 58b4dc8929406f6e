// Module reads at scale: 10,000,000 log events and 100,000 events in each other module's table over 30
// days, written as ingest writes them (rows, summaries, follow-ups) in large transactions; then the
// median time of the first page of each read, with and without filters, on SQLite and PostgreSQL.
// BENCH_READS_SCALE (default 1) scales the row counts; BENCH_READS_RUNS (default 15) the timed runs per read.
// TEST_DATABASES=sqlite (or postgres) narrows the databases. Loopback only; every loop is bounded.
import { sql } from 'kysely'
import { newEventId } from '../src/ids.ts'
import type { PortalContext } from '../src/context.ts'
import type { EventModule } from '../src/modules/module.ts'
import { writeEvents, type AcceptedEvent } from '../src/modules/write-events.ts'
import { moduleByType } from '../src/modules/registry.ts'
import { DIALECTS, createProject, startTestPortal, type Dialect, type TestPortal } from '../test/support/portal.ts'

const SCALE = Number(process.env.BENCH_READS_SCALE ?? 1)
const RUNS = Number(process.env.BENCH_READS_RUNS ?? 15)
const WARMUP_RUNS = 3
const BIG_MODULE = 'log'
const BIG_COUNT = Math.round(10_000_000 * SCALE)
const OTHER_COUNT = Math.round(100_000 * SCALE)
const ROWS_PER_TRANSACTION = 50_000
const DAY_MS = 86_400_000
const END_MS = Date.UTC(2026, 10, 15)
const START_MS = END_MS - 30 * DAY_MS

// A seeded generator, so that both databases get the same rows.
let randomState = 1
function random(): number {
  randomState = (randomState * 1_103_515_245 + 12_345) % 2_147_483_648
  return randomState / 2_147_483_648
}
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]
const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`)

const SERVICES = names('service', 30)
const ENVIRONMENTS = ['production', 'staging', 'development', 'preview']
const LEVELS = ['info', 'info', 'info', 'info', 'debug', 'debug', 'warn', 'error', 'trace', 'fatal']
const WORDS = ['order', 'payment', 'user', 'cache', 'timeout', 'retry', 'created', 'failed', 'queued', 'shipped', 'refund', 'login']

/** The payload of the i-th seeded event of a type: varied enough that filters and groups are realistic. */
const PAYLOADS: Record<string, (i: number) => Record<string, unknown>> = {
  log: (i) => ({
    level: pick(LEVELS),
    message: `${pick(WORDS)} ${pick(WORDS)} ${i % 9973} ${pick(WORDS)}`,
    module: `module-${i % 20}`,
    fields: { requestId: `req-${i % 50_000}`, userId: i % 1000 },
  }),
  audit: (i) => ({ actor: `user-${i % 200}`, action: `${pick(WORDS)}.${pick(['created', 'updated', 'deleted'])}`, resource: `resource/${i % 1000}`, statusCode: pick([200, 201, 204, 400, 403, 404, 500]) }),
  deploy: (i) => ({ service: pick(SERVICES), environment: pick(ENVIRONMENTS), version: `v${i}`, status: random() < 0.1 ? 'failed' : 'succeeded', commit: `c${i.toString(16)}` }),
  config: (i) => ({ path: `config/${i % 2000}.yaml`, actor: `user-${i % 50}`, diff: `-limit: ${i}\n+limit: ${i + 1}` }),
  repository: (i) => ({ provider: 'github', repo: `acme/repo-${i % 50}`, branch: `branch-${i % 20}`, commit: `c${i.toString(16)}`, author: `author-${i % 300}` }),
  cost: () => ({ provider: pick(['aws', 'gcp', 'azure']), service: pick(SERVICES), region: `region-${Math.floor(random() * 10)}`, amount: Math.round(random() * 10_000) / 100, currency: pick(['USD', 'EUR', 'GBP']) }),
  performance: () => ({ service: pick(SERVICES.slice(0, 20)), metric: `metric-${Math.floor(random() * 10)}`, value: Math.round(random() * 100_000) / 100, unit: 'ms' }),
  trace: (i) => ({
    traceId: `trace-${Math.floor(i / 5)}`,
    spanId: `span-${i}`,
    ...(i % 5 === 0 ? {} : { parentSpanId: `span-${i - (i % 5)}` }),
    serviceName: pick(SERVICES.slice(0, 10)),
    name: `operation ${i % 5}`,
    durationMs: Math.round(random() * 500),
  }),
  error: (i) => ({ name: pick(['TypeError', 'RangeError', 'TimeoutError']), message: `failed ${i % 100}`, release: `r${i % 20}`, environment: pick(ENVIRONMENTS) }),
  feature_flag: (i) => ({ key: `flag-${i % 500}`, enabled: random() < 0.5, rollout: Math.floor(random() * 101), actor: `user-${i % 50}` }),
  webhook: (i) => ({ destination: `destination-${i % 100}`, url: `https://hooks.example.com/${i % 100}`, statusCode: pick([200, 200, 200, 204, 500, 503]), attempt: 1 + (i % 3) }),
  tenant: (i) => ({ projectId: `prj_tenant_${i % 1000}`, plan: pick(['free', 'team', 'enterprise']), ingestLimitPerSecond: pick([100, 500, 1000]) }),
  // one update per session, its start spread over the month as the event's time is
  session: (i) => ({
    release: `r${i % 20}`,
    environment: pick(ENVIRONMENTS),
    started: new Date(START_MS + Math.floor((i / OTHER_COUNT) * 30 * DAY_MS)).toISOString(),
    sessionId: `session-${i}`,
    distinctId: `user-${i % 5000}`,
    status: pick(['exited', 'exited', 'exited', 'exited', 'exited', 'exited', 'errored', 'abnormal', 'crashed', 'ok']),
  }),
  video: (i) => ({ jobId: `job-${Math.floor(i / 4)}`, status: ['queued', 'recording', 'processing', 'done'][i % 4], targetUrl: 'https://example.com/page', ...(i % 4 === 3 ? { artifactUrl: `https://cdn.example.com/${i}.mp4` } : {}) }),
}

/** Writes events as ingest does after its checks (rows, group summaries, each module's follow-up), in big transactions. */
async function seedModule(ctx: PortalContext, module: EventModule<any>, projectId: string, count: number): Promise<void> {
  const payload = PAYLOADS[module.type]
  for (let start = 0; start < count; start += ROWS_PER_TRANSACTION) {
    const accepted: AcceptedEvent[] = []
    for (let i = start; i < Math.min(count, start + ROWS_PER_TRANSACTION); i++) {
      // spread over the month in order, so that traces and jobs keep their shape
      const ts = START_MS + Math.floor((i / count) * 30 * DAY_MS)
      const data = payload(i)
      accepted.push({ module, event: { id: newEventId(ts), projectId, ts, receivedAt: ts, data }, dataJson: JSON.stringify(data) })
    }
    await ctx.storage.db.transaction().execute((trx) => writeEvents(trx, ctx, accepted))
  }
}

async function seed(t: TestPortal, projectId: string): Promise<void> {
  for (const module of moduleByType.values()) {
    const started = performance.now()
    const count = module.type === BIG_MODULE ? BIG_COUNT : OTHER_COUNT
    await seedModule(t.portal.ctx, module, projectId, count)
    console.log(`  seeded ${count} ${module.type} events in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
  // What autovacuum and a DBA's ANALYZE do after a bulk load: planner statistics (and, on PostgreSQL, the visibility map).
  await sql.raw(t.dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(t.portal.ctx.storage.db)
}

/** The reads timed: name, path (project_id is appended), and whether it is an aggregate (200 ms target) or a page (50 ms). */
function readsOf(): [name: string, path: string, aggregate?: boolean][] {
  const dayFrom = new Date(END_MS - DAY_MS).toISOString()
  const monthFrom = new Date(START_MS).toISOString()
  const to = new Date(END_MS).toISOString()
  const eventPages = [...moduleByType.values()].map((module): [string, string] => [`${module.type} events`, `${module.basePath}/events?`])
  return [
    ...eventPages,
    ['log events level=error', '/api/modules/logs/events?level=error&'],
    ['log events module+level', '/api/modules/logs/events?module=module-3&level=warn&'],
    ['log events q=refund', '/api/modules/logs/events?q=refund&'],
    ['log events field.requestId, one day', `/api/modules/logs/events?field.requestId=req-49999&from=${dayFrom}&to=${to}&`],
    ['log events field.requestId, month', '/api/modules/logs/events?field.requestId=req-49999&'],
    ['log events one day', `/api/modules/logs/events?from=${dayFrom}&to=${to}&`],
    ['log levels, one day', `/api/modules/logs/levels?from=${dayFrom}&to=${to}&`],
    ['log levels, month', `/api/modules/logs/levels?from=${monthFrom}&to=${to}&`, true],
    ['audit events actor', '/api/modules/audit/events?actor=user-7&'],
    ['audit actors', '/api/modules/audit/actors?'],
    ['deploy events service', '/api/modules/deploys/events?service=service-3&environment=production&'],
    ['deploys latest', '/api/modules/deploys/latest?'],
    ['config paths', '/api/modules/configs/paths?'],
    ['repository branches', '/api/modules/repository/branches?'],
    ['repository authors', '/api/modules/repository/authors?'],
    ['cost events currency', '/api/modules/costs/events?currency=EUR&'],
    ['cost totals by service, month', '/api/modules/costs/totals?', true],
    ['cost totals EUR by region', '/api/modules/costs/totals?currency=EUR&group_by=region&', true],
    ['performance events metric', '/api/modules/performance/events?metric=metric-3&'],
    ['performance summary, month', `/api/modules/performance/summary?from=${monthFrom}&to=${to}&`, true],
    ['performance summary one metric', `/api/modules/performance/summary?metric=metric-3&from=${monthFrom}&to=${to}&`, true],
    ['performance series 1h, month', `/api/modules/performance/series?metric=metric-3&service=service-1&from=${monthFrom}&to=${to}&bucket=1h&`, true],
    ['traces list', '/api/traces?'],
    ['traces list service', '/api/traces?service=service-4&'],
    ['trace detail', '/api/traces/trace-77?'],
    ['flags', '/api/flags/flags?'],
    ['flag detail', '/api/flags/flags/flag-7?'],
    ['tenant plans', '/api/tenants/plans?'],
    ['release health, one day', `/api/modules/sessions/releases?from=${dayFrom}&to=${to}&`, true],
    ['release health, month', `/api/modules/sessions/releases?from=${monthFrom}&to=${to}&`, true],
    ['video jobs', '/api/video/jobs?'],
    ['video jobs status=done', '/api/video/jobs?status=done&'],
    ['video job detail', '/api/video/jobs/job-77?'],
    ['webhook reported attempts', '/api/webhooks/reported-attempts?'],
  ]
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

async function timeReads(t: TestPortal, projectId: string): Promise<void> {
  // The client's pooled connection went idle during seeding and the server has closed it: let it fail once here.
  await t.request('GET', '/api/health').catch(() => undefined)
  for (const [name, path, aggregate] of readsOf()) {
    const url = `${path}project_id=${projectId}`
    const times: number[] = []
    for (let run = 0; run < WARMUP_RUNS + RUNS; run++) {
      const started = performance.now()
      const res = await t.request('GET', url, { token: t.viewerToken })
      const elapsed = performance.now() - started
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${res.text}`)
      if (run >= WARMUP_RUNS) times.push(elapsed)
    }
    const target = aggregate ? 200 : 50
    const ms = median(times)
    console.log(`  ${t.dialect.padEnd(8)} ${name.padEnd(34)} median ${ms.toFixed(1).padStart(7)} ms  (target ${target} ms) ${ms <= target ? 'ok' : 'OVER'}`)
  }
}

async function benchDialect(dialect: Dialect): Promise<void> {
  const t = await startTestPortal(dialect, { LOG_LEVEL: 'warn' }, { checkResponses: false })
  try {
    const project = await createProject(t, 'bench')
    const started = performance.now()
    await seed(t, project.id)
    console.log(`  ${dialect}: seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    const logBytes = (await t.portal.ctx.storage.space.tableSizes(['log_events'])).log_events
    console.log(`  ${dialect}: log_events with its indexes ${(logBytes / 1e9).toFixed(2)} GB, ${(logBytes / BIG_COUNT).toFixed(0)} B/event`)
    await timeReads(t, project.id)
  } finally {
    await t.close()
  }
}

export async function run() {
  console.log(`${BIG_COUNT} ${BIG_MODULE} events, ${OTHER_COUNT} of each other type, ${RUNS} timed runs per read (median over loopback HTTP)`)
  for (const dialect of DIALECTS) {
    randomState = 1
    await benchDialect(dialect)
  }
}
