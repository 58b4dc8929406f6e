// `npm run bench -- ui`: the web UI's JavaScript size gzipped (budget 60 KB gzipped), and the time to the first row
// of every page in headless Chromium on loopback with BENCH_UI_EVENTS events in the project (default 100,000;
// target: under 300 ms), each beside the same page's time on an empty project: the floor of browser, app and one read.
import fs from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { UI_DIST_DIR } from '../src/http/ui.ts'
import { createProject, event, ingest, startTestPortal, type TestPortal, type TestProject } from '../test/support/portal.ts'
import { openBrowser } from '../test/ui/browser.ts'

const EVENTS = Number(process.env.BENCH_UI_EVENTS ?? 100_000)
const BATCH = 1000
const LOADS_PER_PAGE = 5
const JS_BUDGET_GZIPPED_BYTES = 60 * 1024
const FIRST_ROW_TARGET_MS = 300

const PORTAL_ENV = {
  INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000000',
  INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000000',
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
  LOG_LEVEL: 'warn',
}

/** The n-th seeded event: mostly logs, with traces, performance values, errors and audit events among them. */
function seededEvent(n: number, ts: string) {
  const turn = Math.floor(n / 20)
  switch (n % 20) {
    case 0:
    case 1:
    case 2:
      return event('trace', { traceId: `t${Math.floor(n / 20)}`, spanId: `s${n}`, ...(n % 20 ? { parentSpanId: `s${n - (n % 20)}` } : {}), serviceName: 'api', name: `op ${n % 7}`, durationMs: n % 300 }, ts)
    case 3:
    case 4:
    case 5:
      return event('performance', { service: 'api', metric: 'http.latency', value: (n * 37) % 900, unit: 'ms' }, ts)
    case 6:
      return event('error', { name: 'TypeError', message: `cannot read property ${n % 50} of undefined`, environment: 'production' }, ts)
    case 7:
      return event('audit', { actor: `user${n % 40}`, action: 'order.updated', resource: `order/${n}` }, ts)
    case 8:
      return event('config', { path: `config/service-${n % 30}.yaml`, actor: `user${n % 40}`, diff: `--- a\n+++ b\n-replicas: ${n % 5}\n+replicas: ${(n % 5) + 1}` }, ts)
    case 9:
      return event('repository', { provider: 'github', repo: `acme/repo-${n % 12}`, branch: ['main', 'develop', `feature-${n % 25}`][n % 3], commit: (n * 2654435761).toString(16).slice(0, 12), author: `dev${n % 30}` }, ts)
    case 10:
      return event('deploy', { service: `svc-${n % 8}`, version: `1.${n % 100}.0`, environment: ['production', 'staging'][n % 2], status: n % 17 ? 'succeeded' : 'failed' }, ts)
    // cases 11 and 12 take turns between two types each (n itself has the same parity on every turn)
    case 11:
      return event(turn % 2 ? 'feature_flag' : 'tenant', turn % 2 ? { key: `flag-${turn % 40}`, enabled: n % 3 === 0, rollout: n % 101, actor: `user${n % 40}` } : { projectId: `tenant-${turn % 60}`, plan: ['starter', 'growth'][turn % 4 >> 1], ingestLimitPerSecond: 100 }, ts)
    case 12:
      return event(turn % 2 ? 'video' : 'cost', turn % 2 ? { jobId: `job-${n % 500}`, status: ['queued', 'done'][n % 2] } : { provider: 'aws', service: `s${n % 6}`, amount: n % 1000, currency: 'USD', period: '2026-10' }, ts)
    default:
      return event('log', { level: ['info', 'warn', 'error', 'debug'][n % 4], module: `m${n % 9}`, message: `request ${n} served`, fields: { requestId: n } }, ts)
  }
}

async function seed(t: TestPortal, project: TestProject) {
  // A second apart, but never spread past 25 days: the default retention (30 days) keeps them all.
  const stepMs = Math.min(1000, (25 * 86_400_000) / EVENTS)
  const start = Date.now() - EVENTS * stepMs
  for (let first = 0; first < EVENTS; first += BATCH) {
    const events = Array.from({ length: BATCH }, (_, i) => seededEvent(first + i, new Date(start + (first + i) * stepMs).toISOString()))
    const answer = await ingest(t, project, events)
    if (answer.status !== 200 || answer.body.accepted !== BATCH) throw new Error(`seed: ${answer.status} ${answer.text.slice(0, 300)}`)
  }
}

function javascriptSize() {
  const assets = path.join(UI_DIST_DIR, 'assets')
  if (!fs.existsSync(assets)) throw new Error('ui/dist is missing: run npm run build:ui first')
  let raw = 0
  let gzipped = 0
  for (const file of fs.readdirSync(assets).filter((name) => name.endsWith('.js'))) {
    const body = fs.readFileSync(path.join(assets, file))
    raw += body.length
    gzipped += gzipSync(body).length
  }
  return { raw, gzipped }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function run() {
  const size = javascriptSize()
  console.log(`JavaScript: ${(size.raw / 1024).toFixed(1)} KB, ${(size.gzipped / 1024).toFixed(1)} KB gzipped (budget ${JS_BUDGET_GZIPPED_BYTES / 1024} KB gzipped)`)

  const t = await startTestPortal('sqlite', PORTAL_ENV, { checkResponses: false })
  const browser = await openBrowser()
  try {
    const project = await createProject(t, 'bench')
    const empty = await createProject(t, 'empty')
    const seeding = performance.now()
    await seed(t, project)
    console.log(`seeded ${EVENTS.toLocaleString('en')} events in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)
    await browser.context.addInitScript((token) => sessionStorage.setItem('portal.accessToken', token), t.viewerToken)

    // From navigation to the first row of the page's main list on screen: the page is usable then.
    const traceId = `t${Math.floor(EVENTS / 20) - 1}`
    const pages: [name: string, url: (project: string) => string, ready: string][] = [
      ['projects', () => '/', 'tbody tr'],
      ['overview', (p) => `/p/${p}`, 'tbody tr, .snippet'],
      ['logs', (p) => `/p/${p}/logs`, 'tbody tr'],
      ['logs, filtered', (p) => `/p/${p}/logs?level=error&q=served`, 'tbody tr'],
      ['traces', (p) => `/p/${p}/traces`, 'tbody tr'],
      ['traces, slow', (p) => `/p/${p}/traces?min_duration_ms=250`, 'tbody tr'],
      ['trace', (p) => `/p/${p}/traces/${traceId}`, '.waterfall li'],
      ['errors', (p) => `/p/${p}/errors`, 'tbody tr'],
      ['deploys', (p) => `/p/${p}/deploys`, 'tbody tr'],
      ['costs', (p) => `/p/${p}/costs`, 'tbody tr'],
      ['performance', (p) => `/p/${p}/performance`, 'tbody tr'],
      ['flags', (p) => `/p/${p}/flags`, 'tbody tr'],
      ['configs', (p) => `/p/${p}/configs`, 'tbody tr'],
      ['repository', (p) => `/p/${p}/repository`, 'tbody tr'],
      ['webhooks', (p) => `/p/${p}/webhooks`, 'h2'],
      ['audit', (p) => `/p/${p}/audit`, 'tbody tr'],
      ['tenants', (p) => `/p/${p}/tenants`, 'tbody tr'],
      ['video', (p) => `/p/${p}/video`, 'tbody tr'],
      ['storage', (p) => `/p/${p}/storage`, 'tbody tr'],
    ]
    const firstRow = async (url: string, ready: string, { empty = false } = {}) => {
      const page = await browser.context.newPage()
      const started = performance.now()
      await page.goto(t.url + url)
      // A page with nothing to show says so (the trace page of the empty project, a 404): on the empty project
      // that state is its "first row". "Loading…" is a state too, and never one.
      const shown = page.locator(`main :is(${ready}), main .state${empty ? ':not(.loading)' : '.error'}`).first()
      await shown.waitFor({ timeout: 30_000 })
      const elapsed = performance.now() - started
      if (!empty && (await shown.evaluate((element) => element.matches('.state.error')))) throw new Error(`${url}: ${await shown.textContent()}`)
      await page.close()
      return elapsed
    }
    console.log(`first row of every page (navigation to first row shown, target ${FIRST_ROW_TARGET_MS} ms), ${LOADS_PER_PAGE} loads each; bound: the same page on an empty project`)
    const over: string[] = []
    for (const [name, url, ready] of pages) {
      const times: number[] = []
      for (let load = 0; load < LOADS_PER_PAGE; load++) times.push(await firstRow(url(project.id), ready))
      const bound: number[] = []
      for (let load = 0; load < 3; load++) bound.push(await firstRow(url(empty.id), ready, { empty: true }))
      if (median(times) > FIRST_ROW_TARGET_MS) over.push(name)
      console.log(`  ${name.padEnd(16)} median ${median(times).toFixed(0).padStart(4)} ms, max ${Math.max(...times).toFixed(0).padStart(4)} ms · empty project median ${median(bound).toFixed(0).padStart(4)} ms`)
    }
    console.log(over.length ? `over ${FIRST_ROW_TARGET_MS} ms (median): ${over.join(', ')}` : `every page under ${FIRST_ROW_TARGET_MS} ms (median)`)
  } finally {
    await browser.close()
    await t.close()
  }
}
