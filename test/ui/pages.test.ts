import { after, afterEach, before, beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { eventTypes } from '../../src/modules/registry.ts'
import { createProject, startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'
import { FAST_WEBHOOKS, createEndpoint, deliver, endedDelivery } from '../webhooks/api.ts'
import { startReceiver, type Receiver } from '../webhooks/receiver.ts'
import { openBrowser, signIn, type Browser } from './browser.ts'
import { TRACE_ID, ago, captureError, seedShop } from './seed.ts'
import { FAILING_TRACE_ID, seedInvestigation } from './seed-investigation.ts'

/** The app's route patterns, read from its source, so that a new page cannot miss the narrow-screen check. */
function routePatterns(): string[] {
  const source = fs.readFileSync(path.resolve(import.meta.dirname, '../../ui/src/app.tsx'), 'utf8')
  return [...source.matchAll(/^\s*\['(\/[^']*)',\s*\w+\]/gm)].map((found) => found[1])
}

/** Waits for the tab title (it names the project once the project is read), failing with the last one seen. */
async function titled(page: Page, expected: string) {
  await page.waitForFunction((title) => document.title === title, expected, { timeout: 5_000 }).catch(async () => assert.equal(await page.title(), expected))
}

function matches(pattern: string, url: string): boolean {
  const pathname = new URL(url, 'http://x').pathname
  return new RegExp(`^${pattern.replace(/:\w+/g, '[^/]+')}/?$`).test(pathname)
}

const APP_ROUTES = routePatterns()

/** The phone widths the UI promises to work at: from 360 px up. */
const NARROW_WIDTHS = [360, 390]

/** Opens `url` and waits for its heading and for the lists after it (nothing says Loading); answers the heading. */
async function settledAt(page: Page, url: string): Promise<string> {
  await page.goto(url)
  const heading = page.locator('main h1').first()
  await heading.waitFor()
  await page.waitForFunction(() => !document.querySelector('main')?.textContent?.includes('Loading'), undefined, { timeout: 10_000 })
  return (await heading.textContent())!
}

/** How far the page reaches past a screen `width` wide, naming the outermost element no scrolling box clips; null when it fits. */
async function horizontalOverflow(page: Page, width: number): Promise<string | null> {
  const reach = await page.evaluate(() => document.documentElement.scrollWidth)
  if (reach <= width) return null
  const culprit = await page.evaluate(() => {
    const all = [...document.querySelectorAll('body *')] as HTMLElement[]
    const wide = all.find((element) => {
      if (element.getBoundingClientRect().right <= window.innerWidth + 1) return false
      for (let parent = element.parentElement; parent; parent = parent.parentElement) if (getComputedStyle(parent).overflowX !== 'visible') return false
      return true
    })
    return wide ? `${wide.tagName.toLowerCase()}.${wide.className} “${(wide.textContent ?? '').slice(0, 40)}”` : 'unknown'
  })
  return `${reach} px (${culprit})`
}

/** A page's kind: its route and the names of its query parameters (a flag's page, the performance page of one metric). */
function pageShape(url: string): string {
  const { pathname, searchParams } = new URL(url, 'http://x')
  const route = APP_ROUTES.find((pattern) => matches(pattern, pathname)) ?? pathname
  return [route, ...[...searchParams.keys()].sort()].join(' ')
}

/**
 * A section's pages: its own, then those its links lead to beneath it (a group, a delivery, a branch's commits),
 * one of each shape, so the check reaches every page of a module without naming an id; `visit` runs on each.
 */
async function sectionPages(page: Page, origin: string, section: string, visit: (url: string) => Promise<void>): Promise<string[]> {
  const shapes = new Set([pageShape(section)])
  const pages: string[] = []
  for (const queue = [section]; queue.length > 0; ) {
    const url = queue.shift()!
    await settledAt(page, origin + url)
    await visit(url)
    pages.push(url)
    const links = await page.locator('main a[href]').evaluateAll((anchors) => anchors.map((anchor) => anchor.getAttribute('href')!))
    for (const link of links) {
      if (!link.startsWith(`${section}/`) && !link.startsWith(`${section}?`)) continue
      if (shapes.has(pageShape(link))) continue
      shapes.add(pageShape(link))
      queue.push(link)
    }
  }
  return pages
}

// Traces, webhooks, every module's page, narrow screens and onboarding, in real Chromium against a real portal.
describe('web UI pages in Chromium', () => {
  let t: TestPortal
  let browser: Browser
  let shop: TestProject
  let page: Page
  let receiver: Receiver
  let failingEndpoint: string
  before(async () => {
    t = await startTestPortal('sqlite', { ...FAST_WEBHOOKS, INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000' })
    shop = await seedShop(t)
    await seedInvestigation(t, shop)
    await captureError(t, shop)
    receiver = await startReceiver()
    const failing = await createEndpoint(t, shop.id, receiver.url('/fail/500'))
    const healthy = await createEndpoint(t, shop.id, receiver.url('/ok/crm'))
    failingEndpoint = failing.id
    const { deliveries } = await deliver(t, shop.id, 'invoice.paid', { invoice: 'inv_7' }, [failing.id, healthy.id])
    // A seed, not a timing: at the start of `npm test` the Chromium suites share two cores (ci4 ran past 10 s).
    for (const delivery of deliveries) await endedDelivery(t, delivery.id, 60_000)
    browser = await openBrowser()
  })
  after(async () => {
    await browser?.close()
    await receiver?.close()
    await t?.close()
  })
  beforeEach(async () => {
    page = await browser.context.newPage()
  })
  afterEach(() => page.close())

  test('at 360 and 390 px no page is wider than the screen: sign-in, onboarding, every module’s pages and every type’s events page, tables scrolling inside their box', async () => {
    const p = `/p/${shop.id}`
    const empty = await createProject(t, 'empty')
    const tooWide: string[] = []
    const measure = async (url: string, width: number) => {
      const overflow = await horizontalOverflow(page, width)
      if (overflow) tooWide.push(`${url} at ${width} px: ${overflow}`)
    }

    for (const width of NARROW_WIDTHS) {
      await page.setViewportSize({ width, height: 844 })
      await page.goto(`${t.url}/`)
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      await measure('the sign-in page', width)
    }
    await signIn(page, `${t.url}/`, t.adminToken)

    // the sections as the UI lists them (ui/src/modules.tsx over the registry), once its read of the registry's types has answered and been drawn
    const registryRead = page.waitForResponse((response) => response.url().includes(`/api/projects/${shop.id}/retention`))
    await page.goto(`${t.url}${p}`)
    await registryRead
    await page.waitForLoadState('networkidle')
    const sections = await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link').evaluateAll((links) => links.map((link) => link.getAttribute('href')!))
    const start = ['/', p, ...eventTypes.map((type) => `${p}/events/${encodeURIComponent(type)}`)]

    const [first, ...others] = NARROW_WIDTHS
    await page.setViewportSize({ width: first, height: 844 })
    const visited: string[] = []
    for (const url of start) {
      await settledAt(page, t.url + url)
      await measure(url, first)
      visited.push(url)
    }
    assert.equal(await settledAt(page, `${t.url}/p/${empty.id}`), 'Send your first events', 'an empty project shows onboarding')
    await measure('the onboarding page', first)
    for (const section of sections.filter((section) => section !== p)) {
      for (const url of await sectionPages(page, t.url, section, (url) => measure(url, first))) visited.push(url)
    }
    for (const pattern of APP_ROUTES) assert.ok(visited.some((url) => matches(pattern, url)), `route ${pattern} is visited: ${visited.join(' ')}`)

    for (const width of others) {
      await page.setViewportSize({ width, height: 844 })
      for (const url of visited) {
        await settledAt(page, t.url + url)
        await measure(url, width)
      }
      await settledAt(page, `${t.url}/p/${empty.id}`)
      await measure('the onboarding page', width)
    }
    assert.deepEqual(tooWide, [])
  })

  test('a trace: error spans marked, a colour per service with a legend, a time axis, attributes as a table', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/traces/${FAILING_TRACE_ID}`, t.viewerToken)
    const legend = page.getByRole('list', { name: 'Services' })
    await legend.waitFor()
    assert.deepEqual((await legend.locator('li').allTextContents()).map((text) => text.trim()), ['gateway', 'orders', 'payments'])
    const spans = page.locator('.waterfall > li')
    assert.deepEqual(await spans.evaluateAll((items) => items.map((item) => item.classList.contains('span-error'))), [true, false, true], 'the 503 root and the status-error span')
    const colours = await spans.locator('.span-bar').evaluateAll((bars) => bars.map((bar) => getComputedStyle(bar).backgroundColor))
    assert.equal(new Set(colours).size, 3, `one colour per service: ${colours}`)
    const legendColours = await legend.locator('.swatch').evaluateAll((swatches) => swatches.map((swatch) => getComputedStyle(swatch).backgroundColor))
    assert.deepEqual(colours, legendColours, 'bars use their service’s legend colour')
    const ticks = await page.locator('.waterfall-axis .tick').allTextContents()
    assert.deepEqual(ticks, ['0 ms', '500 ms', '1.00 s'], 'round steps over the 1.4 s trace')
    await page.locator('.span-name', { hasText: 'charge' }).click()
    await page.getByRole('row', { name: 'status error: card declined' }).waitFor()
    await page.getByRole('row', { name: 'payment.provider acme-pay' }).waitFor()
  })

  test('traces: lookup by id, and filters by duration and by error', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/traces`, t.viewerToken)
    await page.getByLabel('Trace id').fill(TRACE_ID)
    await page.getByRole('button', { name: 'Open trace' }).click()
    await page.waitForURL(`**/traces/${TRACE_ID}`)
    await page.getByRole('heading', { name: 'POST /checkout' }).waitFor()

    await page.goto(`${t.url}/p/${shop.id}/traces`)
    await page.getByLabel('Errors').selectOption('true')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL('**/traces?error=true')
    // the unfiltered list stays on screen until the filtered one arrives: wait for the healthy trace to go
    await page.getByRole('link', { name: 'POST /checkout' }).waitFor({ state: 'detached' })
    await page.getByRole('link', { name: 'POST /orders' }).waitFor()

    await page.goto(`${t.url}/p/${shop.id}/traces?min_duration_ms=1000`)
    await page.getByRole('link', { name: 'POST /orders' }).waitFor()
    assert.equal(await page.getByRole('link', { name: 'POST /checkout' }).count(), 0)
  })

  test('webhooks: a failing endpoint says so, since when, with its success rate and last status; deliveries show URL and response code; test event; active tab', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/webhooks`, t.adminToken)
    const failing = page.getByRole('row').filter({ hasText: '/fail/500' })
    await failing.getByText('failing').waitFor()
    const { failingSince } = (await t.request('GET', `/api/webhooks/endpoints/${failingEndpoint}`, { token: t.viewerToken })).body
    assert.ok(failingSince, 'the API has the endpoint failing after its failed attempts')
    assert.equal(await failing.getByText(/^failing since /).locator('time').getAttribute('datetime'), failingSince)
    // the state comes with the endpoint, the rate and the last status with the health read that follows
    await failing.getByText(/% of/).waitFor()
    const failingText = (await failing.textContent())!
    assert.doesNotMatch(failingText, /healthy|enabled/)
    assert.match(failingText, /0% of 3/)
    assert.match(failingText, /HTTP 500/)
    const healthy = page.getByRole('row').filter({ hasText: '/ok/crm' })
    await healthy.getByText('healthy').waitFor()
    assert.doesNotMatch((await healthy.textContent())!, /failing|since/)
    // on a loaded machine a 1 s timeout can fail an attempt before the retry succeeds: the rate is not asserted here
    assert.match((await healthy.textContent())!, /\d+% of \d+.*HTTP 200/)
    assert.equal(await page.getByRole('link', { name: 'Endpoints', exact: true }).getAttribute('aria-current'), 'page')

    await healthy.getByRole('button', { name: 'Send test event' }).click()
    await page.getByRole('link', { name: 'follow its delivery' }).click()
    await page.getByRole('heading', { name: /webhook\.test/ }).waitFor()

    await page.goto(`${t.url}/p/${shop.id}/webhooks/deliveries?endpoint_id=${failingEndpoint}`)
    const row = page.getByRole('row').filter({ hasText: 'invoice.paid' })
    await row.waitFor()
    assert.match((await row.textContent())!, new RegExp(`HTTP 500.*${receiver.url('/fail/500').replace(/[.]/g, '\\.')}`))
    assert.equal(await page.getByRole('link', { name: 'Deliveries', exact: true }).getAttribute('aria-current'), 'page')
    assert.equal(await page.getByRole('link', { name: 'Endpoints', exact: true }).getAttribute('aria-current'), null)
  })

  test('webhook deliveries have the time control: 7 days by default, a preset or a custom range narrows the list and its read by creation time', async () => {
    const deliveriesRead = () => page.waitForRequest((request) => new URL(request.url()).pathname === '/api/webhooks/deliveries')
    const firstRead = deliveriesRead()
    await signIn(page, `${t.url}/p/${shop.id}/webhooks/deliveries`, t.viewerToken)
    const range = page.getByRole('group', { name: 'Time range' })
    await page.getByRole('row').filter({ hasText: 'invoice.paid' }).first().waitFor()
    assert.equal(await range.getByRole('button', { name: '7 d' }).getAttribute('aria-pressed'), 'true', 'deliveries default to the last 7 days')
    const sevenDaysAgo = Date.parse(new URL((await firstRead).url()).searchParams.get('from')!)
    assert.ok(Math.abs(Date.now() - 7 * 86_400_000 - sevenDaysAgo) < 60_000, 'the read starts 7 days back')

    const presetRead = deliveriesRead()
    await range.getByRole('button', { name: '15 m' }).click()
    await page.waitForURL(/range=15m/)
    const preset = new URL((await presetRead).url()).searchParams
    assert.ok(Math.abs(Date.now() - 15 * 60_000 - Date.parse(preset.get('from')!)) < 60_000, 'the read starts 15 min back')
    assert.equal(preset.get('to'), null, 'a preset reads to now, so later deliveries still show')
    await page.getByRole('row').filter({ hasText: 'invoice.paid' }).first().waitFor()

    // An hour before anything was delivered: the read carries both ends and the list is empty.
    const [from, to] = [ago(180), ago(120)]
    const customRead = deliveriesRead()
    await page.goto(`${t.url}/p/${shop.id}/webhooks/deliveries?${new URLSearchParams({ from, to })}`)
    const custom = new URL((await customRead).url()).searchParams
    assert.deepEqual([custom.get('from'), custom.get('to')], [from, to])
    await page.getByText('No delivery matches.').waitFor()
    assert.equal(await range.getByRole('button', { name: 'Custom' }).getAttribute('aria-pressed'), 'true')
  })

  test('configs: changes per path with the diff rendered; repository: branches, authors, commits', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/configs`, t.viewerToken)
    await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Configs' }).waitFor()
    const path = page.getByRole('row').filter({ hasText: 'config/app.yaml' })
    assert.match((await path.textContent())!, /config\/app\.yaml\s*2/)
    await path.getByRole('link', { name: 'config/app.yaml' }).click()
    await page.getByRole('heading', { name: 'Changes of config/app.yaml' }).waitFor()
    // the heading comes before the changes' read has answered
    await page.locator('.diff-add').first().waitFor()
    assert.deepEqual(await page.locator('.diff-add').allTextContents(), ['+retries: 5\n', '+timeout: 10\n'])
    assert.deepEqual(await page.locator('.diff-del').allTextContents(), ['-retries: 3\n', '-timeout: 5\n'])

    await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Repository' }).click()
    const main = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'main', exact: true }) })
    assert.match((await main.textContent())!, /main\s*2\s*c0ffee12ab\s*dave/)
    const carol = page.getByRole('row').filter({ hasText: 'carol' }).filter({ has: page.getByRole('link', { name: 'carol' }) })
    assert.match((await carol.textContent())!, /carol\s*2/)
    await carol.getByRole('link', { name: 'carol' }).click()
    await page.getByRole('heading', { name: 'Commits by carol' }).waitFor()
    await page.locator('tbody tr').nth(1).waitFor()
    assert.equal(await page.locator('tbody tr').count(), 2)
  })

  test('the navigation comes from the registry: every event type reaches a page, and the generic page lists any type', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/events/config`, t.viewerToken)
    await page.getByText('"path": "deploy/values.yaml"').waitFor()
    const retention = await t.request('GET', `/api/projects/${shop.id}/retention`, { token: t.viewerToken })
    const types = Object.keys(retention.body.effective)
    assert.deepEqual([...types].sort(), [...eventTypes].sort())
    const nav = page.getByRole('navigation', { name: 'Project sections' })
    const hrefs = await nav.getByRole('link').evaluateAll((links) => links.map((link) => link.getAttribute('href')))
    // every type has a way in: the page of its own that ui/src/modules.tsx declares, or the generic events page
    const sections = fs.readFileSync(path.resolve(import.meta.dirname, '../../ui/src/modules.tsx'), 'utf8')
    const pages = Object.fromEntries([...sections.matchAll(/\{ path: '([^']+)', label: '[^']*', type: '([^']+)' \}/g)].map(([, section, type]) => [type, section]))
    assert.equal(pages.log, 'logs', 'the sections are read from the UI')
    for (const type of types) assert.ok(hrefs.includes(`/p/${shop.id}/${pages[type] ?? `events/${type}`}`), `${type} reaches a page`)
  })

  test('an empty project shows how to send its first events with its own values; the projects list shows activity; the tab names the page', async () => {
    const empty = await createProject(t, 'fresh')
    await signIn(page, `${t.url}/p/${empty.id}`, t.adminToken)
    await page.getByRole('heading', { name: 'Send your first events' }).waitFor()
    await titled(page, 'Overview · fresh — Observability Portal')
    for (const title of ['Node.js SDK', 'curl', 'OpenTelemetry', 'Sentry SDK']) await page.locator('.snippet figcaption strong', { hasText: title }).waitFor()
    const snippets = (await page.locator('.snippet pre').allTextContents()).join('\n')
    assert.ok(snippets.includes(`baseUrl: '${t.url}'`), snippets)
    assert.ok(snippets.includes(`OTEL_EXPORTER_OTLP_ENDPOINT=${t.url}/api/otlp`), snippets)
    await page.getByRole('button', { name: 'Create a key for these snippets' }).click()
    const key = (await page.locator('[data-secret]').first().textContent())!
    const dsn = (await page.locator('[data-secret]').last().textContent())!
    assert.match(dsn, /^http:\/\/.+@.+\/\d+$/)
    const filled = (await page.locator('.snippet pre').allTextContents()).join('\n')
    for (const value of [`apiKey: '${key}'`, `authorization: Bearer ${key}`, `dsn: '${dsn}'`]) assert.ok(filled.includes(value), `${value} in ${filled}`)

    // the curl snippet works as shown
    const curl = await t.request('POST', '/api/errors/capture', { token: key, body: { name: 'Error', message: 'my first error', service: 'api' } })
    assert.equal(curl.status, 201)
    await page.reload()
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    await page.getByRole('row').filter({ hasText: 'error' }).getByRole('link', { name: 'error' }).waitFor()

    await page.goto(`${t.url}/`)
    const shopRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'shop', exact: true }) })
    // two times once the activity read has answered: the last activity, and when the project was created
    await shopRow.locator('time').nth(1).waitFor()
    const events = Number((await shopRow.locator('td.num').first().textContent())!.trim())
    assert.ok(events >= 30, `the shop's events in 24 h: ${events}`)
    await titled(page, 'Projects — Observability Portal')
    await page.goto(`${t.url}/p/${shop.id}/traces/${TRACE_ID}`)
    await page.getByRole('heading', { name: 'POST /checkout' }).waitFor()
    await titled(page, `${TRACE_ID} · Traces · shop — Observability Portal`)
  })
})
