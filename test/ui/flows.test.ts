import { after, afterEach, before, beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { createProject, event, ingest, startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'
import { SCAN_WINDOW } from '../../src/modules/event-reads.ts'
import { FAST_WEBHOOKS, createEndpoint, deliver, endedDelivery } from '../webhooks/api.ts'
import { startReceiver, type Receiver } from '../webhooks/receiver.ts'
import { openBrowser, recordApiRequests, signIn, type Browser } from './browser.ts'
import { TRACE_ID, ago, captureError, seedShop } from './seed.ts'

// End-to-end in real headless Chromium against a real portal; UI flows do not depend on the database, so SQLite.
describe('web UI in Chromium', () => {
  let t: TestPortal
  let browser: Browser
  let shop: TestProject
  let page: Page
  let receiver: Receiver
  before(async () => {
    // No attempt here is meant to time out: a loaded start (the Chromium suites share two cores) may take
    // more than FAST_WEBHOOKS' second for a receiver's 500.
    t = await startTestPortal('sqlite', { ...FAST_WEBHOOKS, WEBHOOK_TIMEOUT_MS: '10000', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000' })
    shop = await seedShop(t)
    receiver = await startReceiver()
    browser = await openBrowser()
  })
  // each only if it started: a before that failed (no Chromium) must fail the file, not leave a portal holding it open
  after(async () => {
    await browser?.close()
    await receiver?.close()
    await t?.close()
  })
  beforeEach(async () => {
    page = await browser.context.newPage()
  })
  afterEach(() => page.close())

  test('signs in with an access token kept in sessionStorage only, survives a reload, and signs out', async () => {
    await page.goto(t.url)
    await page.getByLabel('Access token').fill('pat_wrong')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'unknown' }).waitFor()

    await page.getByLabel('Access token').fill(t.adminToken)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Projects' }).waitFor()
    await page.getByRole('link', { name: 'shop' }).waitFor()
    const stored = await page.evaluate(() => ({ session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie }))
    assert.deepEqual(stored, { session: [t.adminToken], local: 0, cookie: '' })

    await page.reload()
    await page.getByRole('link', { name: 'shop' }).waitFor()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Access token').waitFor()
    assert.equal(await page.evaluate(() => sessionStorage.length), 0)
  })

  test('with a kept token a page loads beside the check of that token, and a token no longer accepted signs out', async () => {
    await signIn(page, `${t.url}/`, t.adminToken)
    let answerMe!: () => void
    const meHeld = new Promise<void>((resolve) => (answerMe = resolve))
    await page.route('**/api/me', async (route) => {
      await meHeld
      await route.continue()
    })
    await page.goto(`${t.url}/p/${shop.id}/logs`)
    await page.locator('main tbody tr').first().waitFor()
    assert.equal(await page.locator('header .who').textContent(), '…', 'the rows came while /api/me was unanswered')
    answerMe()
    await page.locator('header .who .role.admin').waitFor()
    await page.unroute('**/api/me')

    await page.evaluate(() => sessionStorage.setItem('portal.accessToken', `pat_${'x'.repeat(43)}`))
    await page.reload()
    await page.getByLabel('Access token').waitFor()
    await page.getByRole('alert').waitFor()
    assert.equal(await page.evaluate(() => sessionStorage.length), 0)
  })

  test('a viewer sees no write controls', async () => {
    await signIn(page, `${t.url}/`, t.viewerToken)
    await page.getByRole('link', { name: 'shop' }).waitFor()
    assert.equal(await page.getByText('viewer', { exact: true }).count(), 1)
    for (const name of ['Create project', 'Rename', 'Delete']) assert.equal(await page.getByRole('button', { name }).count(), 0, name)
    await page.goto(`${t.url}/p/${shop.id}/keys`)
    await page.getByRole('cell', { name: 'test key' }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0)
    assert.equal(await page.getByRole('button', { name: 'Revoke' }).count(), 0)
  })

  test('an admin creates, renames and (after confirming) deletes a project, and sees a new key once', async () => {
    await signIn(page, `${t.url}/`, t.adminToken)
    // the activity read answers while the new name is being typed: the re-render it brings must not put the old name back
    let answerActivity!: () => void
    const activityHeld = new Promise<void>((resolve) => (answerActivity = resolve))
    await page.route('**/api/projects/activity?*', async (route) => {
      await activityHeld
      await route.continue()
    })
    await page.getByLabel('New project name').fill('ui-made')
    await page.getByRole('button', { name: 'Create project' }).click()
    const row = page.getByRole('row').filter({ hasText: 'ui-made' })
    await row.waitFor()
    await row.getByRole('button', { name: 'Rename' }).click()
    await row.getByLabel('Name').fill('ui-renamed')
    answerActivity()
    await row.getByRole('cell', { name: '…' }).first().waitFor({ state: 'detached' })
    await page.unroute('**/api/projects/activity?*')
    await row.getByRole('button', { name: 'Save' }).click()
    const renamed = page.getByRole('row').filter({ hasText: 'ui-renamed' })
    await renamed.waitFor()

    await renamed.getByRole('link', { name: 'API keys' }).click()
    await page.getByLabel('New key name').fill('ci')
    await page.getByRole('button', { name: 'Create key' }).click()
    const key = await page.locator('[data-secret]').first().textContent()
    assert.match(key!, /^pk_/)
    await page.getByRole('button', { name: 'I have copied them' }).click()
    assert.equal(await page.locator('[data-secret]').count(), 0)
    assert.doesNotMatch(await page.content(), new RegExp(key!))

    await page.getByRole('link', { name: 'Portal' }).click()
    await renamed.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()
    assert.equal(await renamed.count(), 1)
    await renamed.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete project' }).click()
    await renamed.waitFor({ state: 'detached' })
    const projects = await t.request('GET', '/api/projects', { token: t.adminToken })
    assert.ok(!projects.body.data.some((project: { name: string }) => project.name === 'ui-renamed'))
  })

  test('a key made for OpenTelemetry and Sentry shows ready-to-paste OTEL_EXPORTER_OTLP_* settings and its DSN once', async () => {
    await signIn(page, `${t.url}/`, t.adminToken)
    await page.getByRole('row').filter({ hasText: 'shop' }).getByRole('link', { name: 'API keys' }).click()
    await page.getByLabel('Signed ingest (POST /api/ingest)').uncheck()
    await page.getByLabel('OpenTelemetry (OTLP/HTTP)').check()
    await page.getByLabel('Sentry SDKs').check()
    await page.getByLabel('New key name').fill('otel and sentry')
    await page.getByRole('button', { name: 'Create key' }).click()
    // the key, the two OTLP settings and the DSN: read once all four are shown, not while the answer is on its way
    await page.locator('[data-secret]').nth(3).waitFor()
    const settings = await page.locator('[data-secret]').allTextContents()
    const key = settings[0]
    assert.deepEqual(settings.slice(1, 3), [`OTEL_EXPORTER_OTLP_ENDPOINT=${t.url}/api/otlp`, `OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer ${key}`])
    assert.match(settings[3], new RegExp(`^http://${key}@127\\.0\\.0\\.1:\\d+/\\d+$`))
    await page.getByRole('button', { name: 'I have copied them' }).click()
    await page.getByRole('cell', { name: 'otlp, sentry' }).waitFor()
  })

  test('keyboard only: sign in with Enter, reach a section by Tab, open it with Enter', async () => {
    await page.goto(t.url)
    // The field takes focus by itself (autofocus), at the first rendering after the app mounts, which may come
    // after `load`: typed before it, the keys went nowhere on a busy machine.
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'token')
    await page.keyboard.type(t.adminToken)
    await page.keyboard.press('Enter')
    const shopLink = page.getByRole('link', { name: 'shop' })
    await shopLink.waitFor()
    for (let presses = 0; presses < 30 && !(await shopLink.evaluate((link) => link === document.activeElement)); presses++) await page.keyboard.press('Tab')
    assert.notEqual(await shopLink.evaluate((link) => getComputedStyle(link).outlineStyle), 'none', 'focus is visible')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
  })

  test('triages an error: the stream shows it unresolved, its page shows the stack and metadata, Resolve resolves it', async () => {
    const { fingerprint } = await captureError(t, shop)
    await signIn(page, `${t.url}/p/${shop.id}/errors`, t.adminToken)
    const row = page.getByRole('row').filter({ hasText: 'TypeError' })
    await row.getByText('unresolved').waitFor()
    await row.getByRole('link').click()
    await page.locator('pre.stack', { hasText: 'computeInvoice' }).waitFor()
    await page.getByText('"cartId": "c_981"').waitFor()
    await page.getByRole('button', { name: 'Resolve', exact: true }).click()
    await page.getByRole('button', { name: 'Reopen' }).waitFor()
    const group = await t.request('GET', `/api/errors/groups/${fingerprint}`, { token: t.viewerToken })
    assert.equal(group.body.status, 'resolved')

    await page.goto(`${t.url}/p/${shop.id}/errors?status=unresolved`)
    await page.getByText('No error group matches').waitFor()
    assert.equal(await page.getByLabel('Status').inputValue(), 'unresolved')
  })

  test('searches logs by text and level; the URL carries the filters and one request loads the page', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/logs`, t.viewerToken)
    await page.getByText('sent 14 reminder e-mails').waitFor()
    assert.equal(await page.locator('tbody tr').count(), 5)
    await page.getByRole('link', { name: 'error 1' }).waitFor()

    await page.getByLabel('Search text').fill('timeout')
    await page.getByLabel('Level', { exact: true }).fill('error')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByText('sent 14 reminder e-mails').waitFor({ state: 'detached' })
    assert.equal(await page.locator('tbody tr').count(), 1)
    assert.match(await page.locator('tbody').textContent() ?? '', /payment provider timeout/)
    const url = new URL(page.url())
    assert.equal(url.searchParams.get('q'), 'timeout')
    assert.equal(url.searchParams.get('level'), 'error')

    const requests = recordApiRequests(page)
    await page.reload()
    await page.getByText('payment provider timeout').waitFor()
    assert.equal(await page.getByLabel('Search text').inputValue(), 'timeout')
    const eventReads = requests.filter((path) => path.startsWith('/api/modules/logs/events'))
    assert.equal(eventReads.length, 1, requests.join('\n'))
    assert.match(eventReads[0], /q=timeout/)
  })

  test('a search with nothing among the newest events says so and searches further on request', async () => {
    const busy = await createProject(t, 'busy')
    // The only match is the oldest log, beyond the window of events the first page looks through.
    const logs = Array.from({ length: SCAN_WINDOW + 10 }, (_, i) => event('log', { message: i === 0 ? 'needle in the haystack' : `hay ${i}` }, ago(60 - i / 1000)))
    for (let start = 0; start < logs.length; start += 1000) assert.equal((await ingest(t, busy, logs.slice(start, start + 1000))).status, 200)

    await signIn(page, `${t.url}/p/${busy.id}/logs?q=needle`, t.viewerToken)
    await page.getByText('No logs among the newest events searched so far').waitFor()
    await page.getByRole('button', { name: 'Search further' }).click()
    await page.getByText('needle in the haystack').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Search further' }).count(), 0)
  })

  test('opens a trace from the list and shows its spans as a nested waterfall', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/traces`, t.viewerToken)
    await page.getByRole('link', { name: 'POST /checkout' }).click()
    await page.waitForURL(`**/traces/${TRACE_ID}`)
    const spans = page.locator('.waterfall > li')
    await spans.first().waitFor()
    assert.deepEqual(
      (await spans.locator('.span-name').allTextContents()).map((text) => text.trim()),
      ['POST /checkout gateway', 'charge card billing', 'SELECT invoices billing'],
    )
    const indents = await spans.locator('.span-name').evaluateAll((names) => names.map((name) => parseFloat(getComputedStyle(name).paddingLeft)))
    assert.ok(indents[0] < indents[1] && indents[1] < indents[2], `children are indented under their parent: ${indents}`)
    await page.locator('.span-name', { hasText: 'charge card' }).click()
    await page.getByRole('row', { name: 'parent span id a1' }).waitFor()
  })

  test('a filter chosen while the list is still loading is the one applied', async () => {
    let answerList!: () => void
    const listHeld = new Promise<void>((resolve) => (answerList = resolve))
    await page.route('**/api/webhooks/deliveries?*', async (route) => {
      await listHeld
      await route.continue()
    })
    await signIn(page, `${t.url}/p/${shop.id}/webhooks/deliveries`, t.viewerToken)
    await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor()
    await page.getByLabel('Status').selectOption('failed')
    answerList()
    // the list arriving re-renders the page around the filters
    await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL('**/deliveries?status=failed')
  })

  test('inspects a failed delivery: every attempt with its request headers, response status and body', async () => {
    const endpoint = await createEndpoint(t, shop.id, receiver.url('/fail'))
    const { deliveries } = await deliver(t, shop.id, 'invoice.paid', { invoice: 'inv_7' }, [endpoint.id])
    // A seed, not a timing: the Chromium suites share two cores at the start of `npm test`.
    await endedDelivery(t, deliveries[0].id, 60_000)

    await signIn(page, `${t.url}/p/${shop.id}/webhooks/deliveries`, t.viewerToken)
    await page.getByLabel('Status').selectOption('failed')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL('**/deliveries?status=failed')
    await page.getByRole('link', { name: 'invoice.paid' }).click()
    const attempts = page.locator('.attempts > li')
    await attempts.first().waitFor()
    assert.equal(await attempts.count(), 3)
    for (const number of [1, 2]) await attempts.nth(number - 1).locator('summary').click()
    for (let index = 0; index < 3; index++) {
      const attempt = attempts.nth(index)
      assert.match((await attempt.locator('summary').textContent())!, new RegExp(`Attempt ${index + 1}\\s*failed\\s*HTTP 500`))
      assert.match((await attempt.locator('pre.body').textContent())!, /receiver broke/)
      assert.match((await attempt.locator('.headers').first().textContent())!, /webhook-signature/)
    }
    assert.equal(await page.getByRole('button', { name: 'Retry now' }).count(), 0, 'viewers cannot retry')

    await page.getByRole('link', { name: 'All deliveries' }).click()
    await page.getByRole('link', { name: 'Endpoints' }).click()
    const reported = page.getByRole('row').filter({ hasText: 'crm' })
    assert.match((await reported.textContent())!, /2\s*1\s*50%/, 'the attempts integrations reported: 2 attempts, 1 failed')
  })

  test('the storage page shows, per event type, the size on disk, the oldest event and the retention in force', async () => {
    await signIn(page, `${t.url}/p/${shop.id}/storage`, t.viewerToken)
    const logs = page.getByRole('row').filter({ has: page.getByText('log', { exact: true }) })
    await logs.getByText(/MB$/).waitFor()
    const text = (await logs.textContent())!
    assert.match(text, /\d+\.\d MB/)
    assert.match(text, /30 days\s*install default/)
    assert.doesNotMatch(text, /—\s*\d+\.\d MB\s*—/, 'the shop has logs, so an event count and an oldest event')
  })
})
