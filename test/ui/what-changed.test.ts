import { after, afterEach, before, beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { createProject, startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'
import { openBrowser, signIn, type Browser } from './browser.ts'
import { createEndpoint, deliver, readDelivery } from '../webhooks/api.ts'
import { eventually, startReceiver, type Receiver } from '../webhooks/receiver.ts'
import { PREVIOUS_COMMIT, RELEASE, RELEASE_COMMIT, SLOW_TRACE_ID, SUSPECT_COMMIT, seedCheckout } from './seed-what-changed.ts'

// Issue 40 in real headless Chromium against a real portal: "what changed?" answered on the page (UI flows do not depend on the database: SQLite).

const CHANGE_TITLES = ['checkout 2.5.0 deployed to production (succeeded)', 'flag new-pricing → on at 100 % by ana', 'config/pricing.yaml changed by bob', 'checkout 2.4.0 deployed to production (succeeded)']

/** Counts the clicks of a walk, as a person would make them. */
function clicks() {
  let count = 0
  return {
    async on(target: { click(): Promise<void> }) {
      count += 1
      await target.click()
    },
    get count() {
      return count
    },
  }
}

describe('what changed, in Chromium', () => {
  let t: TestPortal
  let browser: Browser
  let page: Page
  let project: TestProject
  let receiver: Receiver
  before(async () => {
    // webhook retries an hour apart: a pending delivery stays pending until someone retries it
    t = await startTestPortal('sqlite', {
      INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000',
      INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000',
      WEBHOOK_RETRY_SCHEDULE: '3600,3600',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    })
    browser = await openBrowser()
    receiver = await startReceiver()
    project = await seedCheckout(t)
  })
  after(async () => {
    await browser?.close()
    await receiver?.close()
    await t?.close()
  })

  /** A customer's endpoint whose receiver failed `count` deliveries once each: they wait, pending, an hour for their next attempt. */
  async function failingEndpoint(path: string, count: number) {
    const hooked = await createProject(t, `hooks ${path}`)
    const endpoint = await createEndpoint(t, hooked.id, receiver.url(path))
    receiver.answer(path, 'fail')
    const ids: string[] = []
    for (let n = 0; n < count; n += 1) ids.push((await deliver(t, hooked.id, 'order.created', { n })).deliveries[0].id)
    for (const id of ids) await eventually(async () => ((await readDelivery(t, id)).attempts[0]?.status === 'failed' ? true : undefined), 10_000, 'a failed first attempt')
    return { hooked, endpoint, ids }
  }
  beforeEach(async () => {
    page = await browser.context.newPage()
  })
  afterEach(() => page.close())

  test('every time chart marks the deploy, the config change and the flag change, and lists them beside it', async () => {
    await signIn(page, `${t.url}/p/${project.id}/errors`, t.viewerToken)
    for (const [section, chart] of [
      ['Errors', '.histogram'],
      ['Logs', null],
      ['Traces', '.scatter'],
      ['Deploys', '.histogram'],
      ['Performance', '.line-chart'],
      ['Costs', null],
    ] as const) {
      await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: section, exact: true }).click()
      await page.getByRole('heading', { name: section, level: 1 }).waitFor()
      if (section === 'Logs' || section === 'Costs') continue // no logs or costs were sent: no chart, and so no panel
      const panel = page.getByRole('complementary', { name: 'Changes in this window' })
      await panel.getByRole('link').first().waitFor()
      assert.deepEqual(await panel.getByRole('link').allTextContents(), CHANGE_TITLES, `${section}: the changes, newest first`)
      const markers = page.locator(`${chart} a.marker`)
      await markers.first().waitFor()
      assert.deepEqual(
        (await markers.evaluateAll((links) => links.map((link) => link.getAttribute('aria-label')!.replace(/ — .*/, '')))).sort(),
        [...CHANGE_TITLES].sort(),
        `${section}: one marker per change`,
      )
    }
    // the webhook deliveries chart has them too
    await page.goto(`${t.url}/p/${project.id}/webhooks/deliveries?range=24h`)
    await page.getByRole('complementary', { name: 'Changes in this window' }).getByRole('link', { name: CHANGE_TITLES[0] }).waitFor()
  })

  test('a marker leads to its change: the flag’s history, the config’s diff, the release’s deploy', async () => {
    await signIn(page, `${t.url}/p/${project.id}/performance`, t.viewerToken)
    const chart = page.locator('.line-chart')
    await chart.waitFor()
    await page.screenshot({ path: '/tmp/wc-performance.png', fullPage: true })
    // a person clicks a marker's label, staggered so that changes minutes apart stay apart
    await chart.getByRole('link', { name: /^flag new-pricing/ }).locator('text').click()
    await page.waitForURL(/\/flags\/new-pricing$/)
    await page.getByRole('cell', { name: 'ana' }).first().waitFor()
    await page.goBack()
    await chart.getByRole('link', { name: /^config\/pricing\.yaml/ }).locator('text').click()
    await page.waitForURL(/\/configs\?path=config%2Fpricing\.yaml/)
    await page.getByText('+cache: false').first().waitFor()
    await page.goBack()
    await chart.getByRole('link', { name: /^checkout 2\.5\.0/ }).locator('text').click()
    await page.waitForURL(/\/deploys\?/)
    assert.equal(new URL(page.url()).searchParams.get('release'), RELEASE)
    await page.getByRole('row').filter({ hasText: '2.5.0' }).first().waitFor()
    assert.equal(await page.getByRole('row').filter({ hasText: '2.4.0' }).count(), 0, 'only the deploy of that release')
    await page.screenshot({ path: '/tmp/wc-deploys.png', fullPage: true })
  })

  test('an admin sets the code host on the repository page; commits there and on the deploys page become links to it', async () => {
    const hosted = await seedCheckout(t, 'hosted')
    await signIn(page, `${t.url}/p/${hosted.id}/repository`, t.adminToken)
    const branchRow = page.getByRole('row').filter({ hasText: 'acme/checkout' }).first()
    await branchRow.waitFor()
    assert.equal(await branchRow.getByRole('link', { name: 'eee5555eee' }).count(), 0, 'no link before a host is set')
    await page.getByText('Code host: not set').click()
    await page.getByRole('combobox', { name: /^Host/ }).selectOption('gitlab')
    await page.getByLabel('Address').fill('https://gitlab.example.com')
    await page.getByRole('button', { name: 'Save code host' }).click()
    await page.getByText('Code host: gitlab at https://gitlab.example.com').waitFor()
    assert.equal(await branchRow.getByRole('link', { name: 'eee5555eee' }).getAttribute('href'), 'https://gitlab.example.com/acme/checkout/-/commit/eee5555eeee')
    await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Deploys', exact: true }).click()
    const deployLink = page.getByRole('table').last().getByRole('link', { name: RELEASE_COMMIT.slice(0, 10) })
    assert.equal(await deployLink.getAttribute('href'), `https://gitlab.example.com/acme/checkout/-/commit/${RELEASE_COMMIT}`, 'a deploy’s commit, in the repository pushed to')
  })

  test('from the error list to the suspect commit of a new group in at most 4 clicks', async () => {
    const walked = await seedCheckout(t, 'walked')
    const set = await t.request('PUT', `/api/modules/repository/links?project_id=${walked.id}`, { token: t.adminToken, body: { provider: 'github', baseUrl: 'https://github.com' } })
    assert.equal(set.status, 200)
    // the code host is not reached from the test: a page in its place answers
    await browser.context.route('https://github.com/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>commit on GitHub</title>' }))
    await signIn(page, `${t.url}/p/${walked.id}/errors`, t.viewerToken)
    const walk = clicks()
    await walk.on(page.getByRole('link', { name: /TypeError/ }).first())
    const suspects = page.getByRole('region', { name: 'Suspect commits' })
    const first = suspects.getByRole('listitem').first()
    await first.waitFor()
    // what a person reads: the suspect first, why it is suspect, and the range it came from
    assert.match((await first.textContent())!, /Invoice totals from the quote · erin on main/)
    assert.match((await first.textContent())!, /touched src\/billing\/invoice\.ts, in this error’s stack/)
    assert.deepEqual(
      await suspects.getByRole('listitem').locator('code').allTextContents(),
      [SUSPECT_COMMIT, RELEASE_COMMIT, 'bbb2222bbbb'].map((sha) => sha.slice(0, 10)),
      'the commits after the previous deploy up to the release, the suspect first',
    )
    assert.equal(await suspects.getByRole('link', { name: `Compare checkout@2.4.0 … ${RELEASE}` }).getAttribute('href'), `https://github.com/acme/checkout/compare/${PREVIOUS_COMMIT}...${RELEASE_COMMIT}`)
    const [commitPage] = await Promise.all([browser.context.waitForEvent('page'), walk.on(first.getByRole('link', { name: SUSPECT_COMMIT.slice(0, 10) }))])
    await commitPage.waitForLoadState()
    assert.equal(commitPage.url(), `https://github.com/acme/checkout/commit/${SUSPECT_COMMIT}`)
    await commitPage.close()
    assert.ok(walk.count <= 4, `${walk.count} clicks`)
  })

  test('the time range, service, environment and release follow every link; earlier, later and zoom out move the range; an opened span is in the URL', async () => {
    await signIn(page, `${t.url}/p/${project.id}/errors?range=24h&service=checkout&environment=production`, t.viewerToken)
    const nav = page.getByRole('navigation', { name: 'Project sections' })
    const params = () => Object.fromEntries(new URL(page.url()).searchParams)
    await nav.getByRole('link', { name: 'Logs', exact: true }).click()
    await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor()
    assert.deepEqual(params(), { range: '24h', service: 'checkout', environment: 'production' })
    await page.getByRole('button', { name: '← Earlier' }).click()
    await page.waitForURL(/from=/)
    const earlier = params()
    assert.equal(Date.parse(earlier.to) - Date.parse(earlier.from), 86_400_000)
    assert.ok(Math.abs(Date.now() - 86_400_000 - Date.parse(earlier.to)) < 60_000, 'the day before the last day')
    assert.equal(earlier.range, undefined)
    await page.getByRole('button', { name: 'Later →' }).click()
    await page.waitForURL((url) => url.searchParams.get('to') !== earlier.to)
    await page.getByRole('button', { name: 'Zoom out' }).click()
    await page.waitForURL((url) => Date.parse(url.searchParams.get('to')!) - Date.parse(url.searchParams.get('from')!) === 2 * 86_400_000)
    const zoomed = params()
    assert.equal(await page.getByRole('button', { name: 'Later →' }).isDisabled(), true, 'a range that ends now goes no later')
    await nav.getByRole('link', { name: 'Traces', exact: true }).click()
    await page.getByRole('heading', { name: 'Traces', level: 1 }).waitFor()
    assert.deepEqual(params(), { from: zoomed.from, to: zoomed.to, service: 'checkout', environment: 'production' })
    // the traces list reads that window and service
    await page.getByRole('link', { name: /^GET/ }).first().click()
    await page.waitForURL(/\/traces\/[0-9a-f]+/)
    assert.equal(params().from, zoomed.from, 'a trace link keeps the range')
    await page.locator('.waterfall summary').first().click()
    await page.waitForURL(/span=root\d/)
    assert.match(params().span, /^root\d$/)
  })

  test('from the performance chart’s jump to the slow traces and the change beside it in at most 5 clicks, with no typed filter', async () => {
    const slow = await t.request('GET', `/api/traces/${SLOW_TRACE_ID}?project_id=${project.id}`, { token: t.viewerToken })
    const slowMs = Date.parse(slow.body.startedAt)
    await signIn(page, `${t.url}/p/${project.id}`, t.viewerToken)
    const walk = clicks()
    await walk.on(page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Performance', exact: true }))
    const points = page.locator('.line-chart .point')
    await points.first().waitFor()
    // the point of the jump's bucket that holds the slowest request
    const starts = await points.evaluateAll((found) => found.map((point) => Date.parse(point.getAttribute('data-x')!)))
    const jump = starts.filter((start) => start <= slowMs).at(-1)!
    const point = page.locator(`.line-chart .point[data-x="${new Date(jump).toISOString()}"]`)
    assert.match((await point.getAttribute('aria-label'))!, /^Traces of checkout from .*: p95 \d+ ms$/)
    await walk.on(point)
    await page.waitForURL(/\/traces\?/)
    const url = new URL(page.url())
    assert.deepEqual([url.searchParams.get('service'), url.searchParams.get('sort'), url.searchParams.get('from')], ['checkout', 'duration', new Date(jump).toISOString()])
    const rows = page.getByRole('table').getByRole('row')
    await rows.nth(1).waitFor()
    // route and status on the row, the slowest first
    assert.match((await rows.nth(1).textContent())!, /GET \/api\/quote504/)
    // the change beside it: the deploy of checkout 2.5.0, listed with the traces
    const panel = page.getByRole('complementary', { name: 'Changes in this window' })
    await walk.on(rows.nth(1).getByRole('link', { name: 'GET /api/quote' }))
    await page.waitForURL(new RegExp(`/traces/${SLOW_TRACE_ID}`))
    await page.getByRole('heading', { name: 'GET' }).waitFor()
    await page.goBack()
    await walk.on(panel.getByRole('link').first())
    await page.waitForURL(/\/deploys\?/)
    assert.equal(new URL(page.url()).searchParams.get('release'), RELEASE)
    assert.ok(walk.count <= 5, `${walk.count} clicks`)
  })

  test('retrying a failing endpoint’s pending deliveries in at most 3 clicks', async () => {
    const { hooked, ids } = await failingEndpoint('/customer/hooks', 3)
    receiver.answer('/customer/hooks', 'ok') // the customer fixed their receiver
    await signIn(page, `${t.url}/p/${hooked.id}`, t.adminToken)
    const walk = clicks()
    await walk.on(page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Webhooks', exact: true }))
    const row = page.getByRole('row').filter({ hasText: '/customer/hooks' })
    await walk.on(row.getByRole('button', { name: 'Retry deliveries…' }))
    const dialog = page.getByRole('dialog')
    assert.match((await dialog.textContent())!, /Send now every pending or failed delivery of http:\/\/127\.0\.0\.1:\d+\/customer\/hooks made after/)
    // by default from before the first failing delivery was made, even when a minute began between it and its attempt
    const from = Date.parse(`${await dialog.getByLabel('From (UTC)').inputValue()}:00Z`)
    assert.ok(from <= Date.parse((await readDelivery(t, ids[0])).createdAt), `the retry starts at ${new Date(from).toISOString()}`)
    await walk.on(dialog.getByRole('button', { name: 'Send them now' }))
    await page.getByRole('status').filter({ hasText: '3 deliveries of' }).waitFor()
    for (const id of ids) await eventually(async () => ((await readDelivery(t, id)).status === 'succeeded' ? true : undefined), 10_000, 'the delivery to succeed')
    assert.ok(walk.count <= 3, `${walk.count} clicks`)
  })

  test('Disable asks first and says pending deliveries wait; the deliveries filter names endpoints; a pending delivery has Retry now', async () => {
    const { hooked, endpoint, ids } = await failingEndpoint('/paused/hooks', 2)
    await signIn(page, `${t.url}/p/${hooked.id}/webhooks`, t.adminToken)
    const row = page.getByRole('row').filter({ hasText: '/paused/hooks' })
    await row.getByRole('button', { name: 'Disable' }).click()
    const dialog = page.getByRole('dialog')
    assert.match((await dialog.textContent())!, /Its pending deliveries wait: they are sent as soon as you enable it again/)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    assert.equal((await readDelivery(t, ids[0])).status, 'pending')
    await row.getByRole('button', { name: 'Disable' }).click()
    await dialog.getByRole('button', { name: 'Disable endpoint' }).click()
    await row.getByText('disabled (manual)').waitFor()
    for (const id of ids) assert.equal((await readDelivery(t, id)).status, 'pending', 'waiting, not failed')
    receiver.answer('/paused/hooks', 'ok')
    await row.getByRole('button', { name: 'Enable' }).click()
    for (const id of ids) await eventually(async () => ((await readDelivery(t, id)).status === 'succeeded' ? true : undefined), 10_000, 'the waiting delivery to go out')

    // one more failing delivery, found by the endpoint's address in the filter, retried from its row
    receiver.answer('/paused/hooks', 'fail')
    const again = (await deliver(t, hooked.id, 'order.created', { n: 9 })).deliveries[0].id
    await eventually(async () => ((await readDelivery(t, again)).attempts[0]?.status === 'failed' ? true : undefined), 10_000, 'a failed attempt')
    receiver.answer('/paused/hooks', 'ok')
    await page.getByRole('link', { name: 'Deliveries', exact: true }).first().click()
    await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor()
    const endpointFilter = page.getByRole('combobox', { name: /^Endpoint/ })
    await endpointFilter.locator(`option[value="${endpoint.id}"]`).waitFor({ state: 'attached' })
    assert.equal(await endpointFilter.locator(`option[value="${endpoint.id}"]`).textContent(), receiver.url('/paused/hooks'))
    await endpointFilter.selectOption(endpoint.id)
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(new RegExp(`endpoint_id=${endpoint.id}`))
    const pendingRow = page.getByRole('row').filter({ hasText: 'pending' })
    await pendingRow.getByRole('button', { name: /^Retry order\.created/ }).click()
    await eventually(async () => ((await readDelivery(t, again)).status === 'succeeded' ? true : undefined), 10_000, 'the retried delivery to succeed')
  })

  test('at 390 px the logs and traces lists and the waterfall give their text the screen’s width, and chart labels keep their size', async () => {
    const phone = await browser.context.newPage()
    await phone.setViewportSize({ width: 390, height: 844 })
    try {
      await signIn(phone, `${t.url}/p/${project.id}/logs?service=pricing`, t.viewerToken)
      const message = phone.locator('td[data-label="Message"]').first()
      await message.waitFor()
      const widths = async () => phone.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth }))
      assert.deepEqual(await widths(), { page: 390, screen: 390 }, 'the logs page does not scroll sideways')
      const messageBox = (await message.locator('.logline').boundingBox())!
      assert.ok(messageBox.width >= 250, `a log message is ${messageBox.width} px wide`)
      assert.equal(await phone.locator('td[data-label="Message"]').count(), 3, 'the OpenTelemetry logs of the pricing service')
      const label = (await phone.locator('.histogram svg text').first().boundingBox())!
      assert.ok(label.height >= 9, `a chart label is ${label.height} px high`)
      await phone.screenshot({ path: '/tmp/investigation-ui-logs-390.png', fullPage: true })

      await phone.goto(`${t.url}/p/${project.id}/traces?sort=duration`)
      const trace = phone.locator('td[data-label="Trace"]').first()
      await trace.waitFor()
      assert.deepEqual(await widths(), { page: 390, screen: 390 }, 'the traces page does not scroll sideways')
      assert.ok((await trace.boundingBox())!.width >= 330, 'a trace row is a card of the screen’s width')
      assert.match((await phone.locator('table.stack tbody tr').first().textContent())!, /GET \/api\/quote/)
      await phone.screenshot({ path: '/tmp/investigation-ui-traces-390.png', fullPage: true })

      await phone.goto(`${t.url}/p/${project.id}/traces/${SLOW_TRACE_ID}`)
      const span = phone.locator('.waterfall .span-name').first()
      await span.waitFor()
      assert.deepEqual(await widths(), { page: 390, screen: 390 }, 'the trace page does not scroll sideways')
      assert.ok((await span.boundingBox())!.width >= 250, 'a span’s name has the row’s width, its bar beneath it')
      assert.ok((await phone.locator('.waterfall .span-bar').first().boundingBox())!.width >= 250, 'the root span’s bar spans the row')
      await phone.screenshot({ path: '/tmp/investigation-ui-trace-390.png', fullPage: true })
    } finally {
      await phone.close()
    }
  })

  test('keyboard: j/k move through the stream, Enter opens, i ignores, r resolves, a assigns, / searches, ? lists the shortcuts', async () => {
    const keyed = await seedCheckout(t, 'keyboard')
    await signIn(page, `${t.url}/p/${keyed.id}/errors?status=`, t.adminToken)
    await page.getByRole('link', { name: /TypeError/ }).first().waitFor()
    await page.keyboard.press('?')
    const overlay = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    await overlay.waitFor()
    assert.match((await overlay.textContent())!, /j \/ knext \/ previous row of the list/)
    await page.keyboard.press('Escape')
    await overlay.waitFor({ state: 'hidden' })
    await page.keyboard.press('j')
    assert.match((await page.evaluate(() => document.activeElement?.textContent)) ?? '', /TypeError/)
    assert.equal(await page.locator('tr.kbd-current').count(), 1)
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/errors\/[0-9a-f]{64}/)
    const fingerprint = new URL(page.url()).pathname.split('/').at(-1)!
    const status = async () => (await t.request('GET', `/api/errors/groups/${fingerprint}`, { token: t.viewerToken })).body.status
    await page.getByRole('group', { name: 'Triage' }).waitFor()
    await page.keyboard.press('i')
    await page.locator('.facts .badge', { hasText: 'ignored' }).waitFor()
    assert.equal(await status(), 'ignored')
    await page.keyboard.press('r')
    await page.locator('.facts .badge', { hasText: 'resolved' }).waitFor()
    assert.equal(await status(), 'resolved')
    await page.keyboard.press('a')
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).name), 'assignee')
    await page.keyboard.type('oidc|ana')
    await page.keyboard.press('Enter')
    await page.getByRole('group', { name: 'Assignee' }).getByText('Assigned to oidc|ana').waitFor()
    assert.equal((await t.request('GET', `/api/errors/groups/${fingerprint}/assignee`, { token: t.viewerToken })).body.assignee, 'oidc|ana')
    await page.goBack()
    await page.getByRole('link', { name: /TypeError/ }).first().waitFor()
    await page.keyboard.press('/')
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).name), 'q')
  })

  test('the dark theme follows the system’s setting', async () => {
    await page.emulateMedia({ colorScheme: 'dark' })
    await signIn(page, `${t.url}/p/${project.id}/performance`, t.viewerToken)
    const colours = () => page.evaluate(() => [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.querySelector('main h1')!).color, getComputedStyle(document.querySelector('table')!).backgroundColor])
    await page.locator('main table').first().waitFor()
    assert.deepEqual(await colours(), ['rgb(18, 21, 27)', 'rgb(227, 231, 238)', 'rgb(26, 30, 38)'])
    await page.emulateMedia({ colorScheme: 'light' })
    assert.deepEqual(await colours(), ['rgb(247, 248, 250)', 'rgb(29, 35, 48)', 'rgb(255, 255, 255)'])
  })
})

