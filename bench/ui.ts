// `npm run bench -- ui`: the web UI's JavaScript size gzipped, and the time to the first usable page
// in headless Chromium on loopback with 100,000 events in the project (target: under 1 s).
import fs from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { UI_DIST_DIR } from '../src/http/ui.ts'
import { createProject, event, ingest, startTestPortal, type TestPortal, type TestProject } from '../test/support/portal.ts'
import { openBrowser } from '../test/ui/browser.ts'

const EVENTS = 100_000
const BATCH = 1000
const LOADS_PER_PAGE = 5
const JS_BUDGET_BYTES = 300 * 1024

const PORTAL_ENV = {
  INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000000',
  INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000000',
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
  LOG_LEVEL: 'warn',
}

/** The n-th seeded event: mostly logs, with traces, performance values, errors and audit events among them. */
function seededEvent(n: number, ts: string) {
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
    default:
      return event('log', { level: ['info', 'warn', 'error', 'debug'][n % 4], module: `m${n % 9}`, message: `request ${n} served`, fields: { requestId: n } }, ts)
  }
}

async function seed(t: TestPortal, project: TestProject) {
  const start = Date.now() - EVENTS * 1000
  for (let first = 0; first < EVENTS; first += BATCH) {
    const events = Array.from({ length: BATCH }, (_, i) => seededEvent(first + i, new Date(start + (first + i) * 1000).toISOString()))
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
  console.log(`JavaScript: ${(size.raw / 1024).toFixed(1)} KB, ${(size.gzipped / 1024).toFixed(1)} KB gzipped (budget ${JS_BUDGET_BYTES / 1024} KB)`)

  const t = await startTestPortal('sqlite', PORTAL_ENV)
  const browser = await openBrowser()
  try {
    const project = await createProject(t, 'bench')
    const seeding = performance.now()
    await seed(t, project)
    console.log(`seeded ${EVENTS.toLocaleString('en')} events in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)
    await browser.context.addInitScript((token) => sessionStorage.setItem('portal.accessToken', token), t.viewerToken)

    // From navigation to the first row of the page's list on screen: the page is usable then.
    const pages: [name: string, url: string][] = [
      ['projects', '/'],
      ['logs', `/p/${project.id}/logs`],
      ['logs, filtered', `/p/${project.id}/logs?level=error&q=served`],
      ['traces', `/p/${project.id}/traces`],
      ['errors', `/p/${project.id}/errors`],
      ['audit', `/p/${project.id}/audit`],
    ]
    console.log(`time to first usable page (navigation to first row shown), ${LOADS_PER_PAGE} loads each; only the very first load finds the browser cache cold:`)
    for (const [name, url] of pages) {
      const times: number[] = []
      for (let load = 0; load < LOADS_PER_PAGE; load++) {
        const page = await browser.context.newPage()
        const started = performance.now()
        await page.goto(t.url + url)
        await page.locator('tbody tr').first().waitFor({ timeout: 30_000 })
        times.push(performance.now() - started)
        await page.close()
      }
      console.log(`  ${name.padEnd(16)} first ${times[0].toFixed(0)} ms, median ${median(times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms`)
    }
  } finally {
    await browser.close()
    await t.close()
  }
}
