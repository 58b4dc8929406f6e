import { beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { createProject, event, ingest, type TestPortal, type TestProject } from '../support/portal.ts'
import { chromiumSuite, signIn } from './browser.ts'
import { ERROR_STACK, TRACE_ID, ago } from './seed.ts'

// Issue 20, points 1–3, in real headless Chromium against a real portal (UI flows do not depend on the database: SQLite).

const RELEASE = 'shop@1.5.0'
// Trace ids that name no stored span: one Sentry made up for an error captured outside any span, one only a log carries.
const SPANLESS_TRACE_ID = '5e7a1e550000400080000000000c0ffe'
const LOG_ONLY_TRACE_ID = '1096000000004000800000000000abcd'
const PYTHON_STACK = [
  'Traceback (most recent call last):',
  '  File "/srv/app/orders.py", line 12, in load',
  '    return cache[key]',
  "KeyError: 'sku-1'",
  '',
  'During handling of the above exception, another exception occurred:',
  '',
  'Traceback (most recent call last):',
  '  File "/srv/app/orders.py", line 20, in checkout',
  '    item = load(key)',
  '  File "/srv/app/orders.py", line 14, in load',
  '    raise LookupError(f"no item {key}")',
  'LookupError: no item sku-1',
].join('\n')

async function ingested(t: TestPortal, project: TestProject, events: unknown[]) {
  const answer = await ingest(t, project, events)
  if (answer.status !== 200 || answer.body.rejected.length > 0) throw new Error(`seed ingest: ${answer.status} ${answer.text}`)
}

async function capture(t: TestPortal, project: TestProject, body: Record<string, unknown>): Promise<{ fingerprint: string; groupFingerprint: string }> {
  const answer = await t.request('POST', '/api/errors/capture', { token: project.key, body })
  if (answer.status !== 201) throw new Error(`capture: ${answer.status} ${answer.text}`)
  return answer.body
}

// Enough spans before the failing one to push it below the fold of an 860 px window.
const CART_ITEMS = 40

/** A checkout that failed: a trace across three services, its logs, the error it raised, and the deploy of the release that raised it. */
async function seedIncident(t: TestPortal, name: string): Promise<TestProject> {
  const project = await createProject(t, name)
  const start = Date.parse(ago(4))
  await ingested(t, project, [
    event('trace', { traceId: TRACE_ID, spanId: 'a1', serviceName: 'gateway', name: 'POST /checkout', durationMs: 240 }, new Date(start).toISOString()),
    // the cart's items load before the charge, so the failing span starts below the fold
    ...Array.from({ length: CART_ITEMS }, (_, item) =>
      event('trace', { traceId: TRACE_ID, spanId: `c${item}`, parentSpanId: 'a1', serviceName: 'cart', name: `load cart item ${item}`, durationMs: 2 }, new Date(start + 1 + (item % 18)).toISOString()),
    ),
    event('trace', { traceId: TRACE_ID, spanId: 'b2', parentSpanId: 'a1', serviceName: 'billing', name: 'charge card', durationMs: 180, status: 'error', attributes: { 'payment.provider': 'acme-pay' } }, new Date(start + 20).toISOString()),
    event('log', { level: 'info', module: 'http', message: 'checkout started', traceId: TRACE_ID, fields: { requestId: 'req_77' } }, new Date(start + 5).toISOString()),
    event('log', { level: 'error', module: 'billing', message: 'invoice total missing', traceId: TRACE_ID, fields: { requestId: 'req_77' } }, new Date(start + 30).toISOString()),
    event('log', { level: 'info', module: 'http', message: 'another request entirely', traceId: 'ffffffffffffffffffffffffffffffff' }, new Date(start + 60).toISOString()),
    event('log', { level: 'warn', module: 'worker', message: 'an old warning' }, ago(120)),
    event('deploy', { service: 'api', version: '1.4.0', environment: 'production', status: 'succeeded' }, ago(300)),
    event('deploy', { service: 'api', version: '1.5.0', release: RELEASE, environment: 'production', status: 'succeeded', commit: 'c0ffee1234' }, ago(30)),
  ])
  await capture(t, project, {
    name: 'TypeError',
    message: "Cannot read properties of undefined (reading 'total')",
    stack: ERROR_STACK,
    release: RELEASE,
    environment: 'production',
    service: 'billing',
    traceId: TRACE_ID,
    spanId: 'b2',
    timestamp: new Date(start + 25).toISOString(),
  })
  return project
}

describe('investigating in Chromium: linked signals, time in hand, the error group page', () => {
  let t: TestPortal
  let page: Page
  const ui = chromiumSuite({ INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000' })
  beforeEach(() => ({ t, page } = ui))

  test('follows an error to its trace, the trace to its logs and errors, a log back to its trace, and the release to the deploy that introduced it, without typing an id', async () => {
    const project = await seedIncident(t, 'incident')
    await signIn(page, `${t.url}/p/${project.id}/errors`, t.viewerToken)
    await page.getByRole('link', { name: /TypeError/ }).click()
    await page.waitForURL(/\/errors\/[^/?]+$/)
    const groupUrl = page.url()

    // error occurrence → trace, its span opened, highlighted and scrolled to
    await page.getByRole('link', { name: `Trace ${TRACE_ID.slice(0, 8)}, span b2` }).click()
    await page.getByRole('heading', { name: 'POST /checkout' }).waitFor()
    assert.match(page.url(), new RegExp(`/traces/${TRACE_ID}\\?span=b2$`))
    const span = page.getByRole('list', { name: /^Spans/ }).getByRole('listitem').filter({ hasText: 'charge card' })
    await span.getByRole('row', { name: 'payment.provider acme-pay' }).waitFor()
    assert.equal(await span.getAttribute('aria-current'), 'true', 'the span of the link is the current one')
    assert.equal(await page.locator('.waterfall > li[aria-current]').count(), 1)
    const background = (item: Element) => getComputedStyle(item.querySelector('summary')!).backgroundColor
    const otherSpan = page.getByRole('list', { name: /^Spans/ }).getByRole('listitem').filter({ hasText: 'load cart item 0' })
    assert.notEqual(await span.evaluate(background), await otherSpan.evaluate(background), 'the current span stands out')
    const inView = (item: Element | null) => {
      const box = item!.querySelector('summary')!.getBoundingClientRect()
      return box.top >= 0 && box.bottom <= window.innerHeight
    }
    await page.waitForFunction(inView, await span.elementHandle(), { timeout: 5_000 })

    // span → the error group of the occurrence raised in it, and back
    await span.getByRole('link', { name: /TypeError/ }).click()
    await page.waitForURL((url) => url.href.startsWith(`${groupUrl}?occurrence=`))
    await page.getByRole('article', { name: 'This occurrence' }).waitFor()
    await page.goBack()
    await page.getByRole('heading', { name: 'POST /checkout' }).waitFor()

    // trace → its errors and its logs
    const signals = page.getByRole('region', { name: 'Signals of this trace' })
    await signals.getByText('1 errors in this trace').waitFor()
    await signals.getByRole('link', { name: /TypeError/ }).waitFor()
    await signals.getByRole('link', { name: 'Logs of this trace' }).click()
    await page.getByText('invoice total missing').waitFor()
    assert.equal(new URL(page.url()).searchParams.get('trace_id'), TRACE_ID)
    assert.deepEqual(await page.locator('tbody tr .logline').allTextContents(), ['invoice total missing', 'checkout started'])

    // log line → the other logs of its request, and → its trace
    await page.getByRole('link', { name: 'Request req_77' }).first().click()
    await page.waitForURL(/field\.requestId=req_77/)
    await page.getByRole('link', { name: `Trace ${TRACE_ID.slice(0, 8)}` }).first().click()
    await page.getByRole('heading', { name: 'POST /checkout' }).waitFor()

    // trace → error group → its release → the deploys of that release → the errors it introduced
    await page.getByRole('region', { name: 'Signals of this trace' }).getByRole('link', { name: /TypeError/ }).click()
    await page.getByRole('table', { name: 'Occurrences per release' }).getByRole('link', { name: RELEASE }).click()
    await page.waitForURL(/\/deploys\?/)
    const deployRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `New in ${RELEASE}` }) })
    await deployRow.waitFor()
    assert.match((await deployRow.textContent())!, /c0ffee1234/)
    assert.equal(await page.getByRole('row').filter({ hasText: '1.4.0' }).count(), 0, 'only the deploys of that release')
    await page.locator('.histogram .marker').first().waitFor()
    await deployRow.getByRole('link', { name: `New in ${RELEASE}` }).click()
    await page.waitForURL(/first_release=/)
    await page.getByRole('link', { name: /TypeError/ }).waitFor()
    assert.equal(new URL(page.url()).searchParams.get('first_release'), RELEASE)
  })

  test('one time control: presets, custom range and time zone kept in the URL; relative times with the absolute on hover; log volume by level and error events over the range', async () => {
    const project = await seedIncident(t, 'time')
    await signIn(page, `${t.url}/p/${project.id}/logs`, t.viewerToken)
    const range = page.getByRole('group', { name: 'Time range' })
    await page.getByText('an old warning').waitFor()
    assert.equal(await range.getByRole('button', { name: '24 h' }).getAttribute('aria-pressed'), 'true', 'logs default to the last 24 h')

    // The histogram counts by level over the range.
    const volume = page.locator('figure.histogram').filter({ hasText: 'Log volume by level' })
    await volume.waitFor()
    const caption = (await volume.locator('figcaption').textContent())!
    assert.match(caption, /error 1/)
    assert.match(caption, /info 2/)
    assert.match(caption, /warn 1/)

    await range.getByRole('button', { name: '1 h' }).click()
    await page.waitForURL(/range=1h/)
    await page.getByText('an old warning').waitFor({ state: 'detached' })
    await page.getByText('invoice total missing').waitFor()
    assert.doesNotMatch((await volume.locator('figcaption').textContent())!, /warn/)

    // Relative time shown, the absolute one in its title, in the zone shown; switching the zone is kept in the URL.
    const time = page.locator('tbody time').first()
    assert.match((await time.textContent())!, /ago/)
    assert.match((await time.getAttribute('title'))!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /)
    const zone = range.getByRole('button', { name: /Time zone/ })
    const before = (await zone.textContent())!
    await zone.click()
    await page.waitForURL(/tz=/)
    assert.notEqual(await zone.textContent(), before)
    await page.waitForURL(/tz=utc|tz=local/)

    // A click on a bar narrows the range to it: an absolute range in the URL.
    await volume.locator('g.bucket[data-total]:not([data-total="0"])').first().click()
    await page.waitForURL(/from=.*&to=|to=.*&from=/)
    assert.equal(await range.getByRole('button', { name: 'Custom' }).getAttribute('aria-pressed'), 'true')

    // A custom range typed in UTC.
    await page.goto(`${t.url}/p/${project.id}/logs?tz=utc&custom=1`)
    const from = new Date(Date.now() - 150 * 60_000).toISOString().slice(0, 16)
    const to = new Date(Date.now() - 90 * 60_000).toISOString().slice(0, 16)
    await range.getByLabel('From', { exact: true }).fill(from)
    await range.getByLabel('To', { exact: true }).fill(to)
    await range.getByRole('button', { name: 'Apply range' }).click()
    await page.waitForURL(/from=/)
    const url = new URL(page.url())
    assert.equal(url.searchParams.get('from'), `${from}:00.000Z`)
    assert.equal(url.searchParams.get('to'), `${to}:00.000Z`)
    // The list of the last 24 h is on screen until the range's own arrives: wait for one of its newer rows to go.
    await page.getByText('invoice total missing').waitFor({ state: 'detached' })
    await page.getByText('an old warning').waitFor()
    assert.equal(await page.locator('tbody tr').count(), 1)

    // The errors stream has the same control and its event counts over time.
    await page.goto(`${t.url}/p/${project.id}/errors?range=24h`)
    const errors = page.locator('figure.histogram').filter({ hasText: 'Error events' })
    await errors.waitFor()
    assert.match((await errors.locator('figcaption').textContent())!, /1 stored in the range/)
    for (const path of ['traces', 'deploys', 'audit', 'performance']) {
      await page.goto(`${t.url}/p/${project.id}/${path}?range=7d`)
      assert.equal(await page.getByRole('group', { name: 'Time range' }).getByRole('button', { name: '7 d' }).getAttribute('aria-pressed'), 'true', path)
    }
  })

  test('every preset of the time control is kept in the URL, and the logs list and histogram read over it', async () => {
    const project = await seedIncident(t, 'presets')
    await signIn(page, `${t.url}/p/${project.id}/logs`, t.viewerToken)
    const range = page.getByRole('group', { name: 'Time range' })
    await page.getByText('an old warning').waitFor()
    const volume = page.locator('figure.histogram').filter({ hasText: 'Log volume by level' })
    const readOf = (pathname: string) => page.waitForRequest((request) => new URL(request.url()).pathname === pathname).then((request) => new URL(request.url()).searchParams)
    // the warning was logged 2 h ago: out of the two shortest presets, within the others
    const presets = [
      { label: '15 m', name: '15m', spanMs: 15 * 60_000, warning: false },
      { label: '1 h', name: '1h', spanMs: 3_600_000, warning: false },
      { label: '24 h', name: '24h', spanMs: 86_400_000, warning: true },
      { label: '7 d', name: '7d', spanMs: 7 * 86_400_000, warning: true },
      { label: '30 d', name: '30d', spanMs: 30 * 86_400_000, warning: true },
    ]
    for (const preset of presets) {
      const [listRead, histogramRead] = [readOf('/api/modules/logs/events'), readOf('/api/modules/logs/histogram')]
      await range.getByRole('button', { name: preset.label, exact: true }).click()
      await page.waitForURL((url) => url.searchParams.get('range') === preset.name)
      assert.equal(await range.getByRole('button', { name: preset.label, exact: true }).getAttribute('aria-pressed'), 'true', preset.label)
      const [list, histogram] = await Promise.all([listRead, histogramRead])
      assert.ok(Math.abs(Date.now() - preset.spanMs - Date.parse(list.get('from')!)) < 60_000, `${preset.label}: the list reads from ${list.get('from')}`)
      assert.equal(list.get('to'), null, `${preset.label}: the list reads to now`)
      assert.equal(Date.parse(histogram.get('to')!) - Date.parse(histogram.get('from')!), preset.spanMs, `${preset.label}: the histogram spans the preset`)
      assert.ok(preset.spanMs / (Number(histogram.get('bucket_seconds')) * 1000) <= 60, `${preset.label}: at most 60 bars`)
      await page.getByText('an old warning').waitFor({ state: preset.warning ? 'visible' : 'detached' })
      await page.getByText('invoice total missing').waitFor()
      await page.waitForFunction(
        ({ warning }) => /warn 1/.test(document.querySelector('figure.histogram figcaption')?.textContent ?? '') === warning,
        { warning: preset.warning },
        { timeout: 5_000 },
      )
      assert.match((await volume.locator('figcaption').textContent())!, /error 1/)
    }
  })

  test('the logs and deploys pages read their histograms and counts once their list has answered, so that its first rows do not wait behind them', async () => {
    const project = await seedIncident(t, 'list first')
    await signIn(page, `${t.url}/p/${project.id}`, t.viewerToken)
    const pages = [
      { path: 'logs', list: '/api/modules/logs/events', secondary: ['/api/modules/logs/histogram', '/api/modules/logs/levels'], shown: page.locator('figure.histogram').filter({ hasText: 'Log volume by level' }) },
      { path: 'deploys', list: '/api/modules/deploys/events', secondary: ['/api/errors/histogram'], shown: page.getByText('0 before · 1 after so far') },
    ]
    for (const { path, list, secondary, shown } of pages) {
      // The list's answer is held back a while: a read that does not wait for it goes out meanwhile.
      let listAnsweredAt = Infinity
      await page.route(`**${list}?*`, async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 300))
        const response = await route.fetch()
        listAnsweredAt = Math.min(listAnsweredAt, Date.now())
        await route.fulfill({ response })
      })
      const askedAt = new Map<string, number>()
      const onRequest = (request: { url(): string }) => {
        const pathname = new URL(request.url()).pathname
        if (secondary.includes(pathname) && !askedAt.has(pathname)) askedAt.set(pathname, Date.now())
      }
      page.on('request', onRequest)
      await page.goto(`${t.url}/p/${project.id}/${path}`)
      await page.locator('tbody tr').first().waitFor()
      await shown.waitFor()
      page.off('request', onRequest)
      await page.unroute(`**${list}?*`)
      for (const read of secondary) assert.ok((askedAt.get(read) ?? -Infinity) >= listAnsweredAt, `${path}: ${read} went out ${listAnsweredAt - askedAt.get(read)!} ms before the list's answer`)
    }
  })

  test('a trace id with no stored spans (a Sentry error outside any span, a log of an unexported trace): the trace page says so and still leads to its errors and logs', async () => {
    const project = await createProject(t, 'spanless')
    const capturedAt = Date.parse(ago(3))
    await capture(t, project, { name: 'RangeError', message: 'quota exceeded', service: 'quota', traceId: SPANLESS_TRACE_ID, timestamp: new Date(capturedAt).toISOString() })
    await ingested(t, project, [
      event('log', { level: 'error', module: 'quota', message: 'quota check failed', traceId: SPANLESS_TRACE_ID }, new Date(capturedAt - 2000).toISOString()),
      event('log', { level: 'info', module: 'quota', message: 'a log of an unexported trace', traceId: LOG_ONLY_TRACE_ID }, ago(2)),
    ])

    // error occurrence → its trace, which has no spans
    await signIn(page, `${t.url}/p/${project.id}/errors`, t.viewerToken)
    await page.getByRole('link', { name: /RangeError/ }).click()
    await page.getByRole('link', { name: `Trace ${SPANLESS_TRACE_ID.slice(0, 8)}`, exact: true }).click()
    await page.waitForURL(new RegExp(`/traces/${SPANLESS_TRACE_ID}$`))
    await page.getByRole('status').filter({ hasText: 'No spans were stored for this trace' }).waitFor()
    assert.equal(await page.getByRole('alert').count(), 0, 'no spans is not a failed read')
    const signals = page.getByRole('region', { name: 'Signals of this trace' })
    await signals.getByText('1 errors in this trace').waitFor()
    await signals.getByRole('link', { name: /RangeError/ }).waitFor()

    // → its logs, placed in time by its error
    await signals.getByRole('link', { name: 'Logs of this trace' }).click()
    await page.getByText('quota check failed').waitFor()
    assert.equal(new URL(page.url()).searchParams.get('trace_id'), SPANLESS_TRACE_ID)
    assert.deepEqual(await page.locator('tbody tr .logline').allTextContents(), ['quota check failed'])

    // a log line naming a trace nobody exported → that trace: no spans, no errors, and its logs
    await page.goto(`${t.url}/p/${project.id}/logs`)
    await page.getByRole('row').filter({ hasText: 'a log of an unexported trace' }).getByRole('link', { name: `Trace ${LOG_ONLY_TRACE_ID.slice(0, 8)}` }).click()
    await page.getByRole('status').filter({ hasText: 'No spans were stored for this trace' }).waitFor()
    await signals.getByText('No error in this trace.').waitFor()
    await signals.getByRole('link', { name: 'Logs of this trace' }).click()
    await page.getByText('a log of an unexported trace').waitFor()
    assert.deepEqual(await page.locator('tbody tr .logline').allTextContents(), ['a log of an unexported trace'])
  })

  test('a trace link naming a span the trace does not have says so; one naming a span it has opens that span without the notice', async () => {
    const project = await seedIncident(t, 'stale span link')
    const notice = page.getByRole('status').filter({ hasText: 'is not in this trace' })
    await signIn(page, `${t.url}/p/${project.id}/traces/${TRACE_ID}?span=0badc0ffee`, t.viewerToken)
    await page.getByRole('heading', { name: 'POST /checkout' }).waitFor()
    assert.equal((await notice.textContent())?.trim(), 'Span 0badc0ffee is not in this trace.')
    assert.equal(await page.locator('.waterfall > li[aria-current]').count(), 0)

    await page.goto(`${t.url}/p/${project.id}/traces/${TRACE_ID}?span=b2`)
    const span = page.getByRole('list', { name: /^Spans/ }).getByRole('listitem').filter({ hasText: 'charge card' })
    await span.getByRole('row', { name: 'payment.provider acme-pay' }).waitFor()
    assert.equal(await span.getAttribute('aria-current'), 'true')
    assert.equal(await notice.count(), 0)
  })

  test('the error group page: any occurrence older and newer, raw Python stack with source lines and the chained traceback, grouping explanation, breakdown', async () => {
    const project = await createProject(t, 'python')
    let fingerprint = ''
    for (const [index, release] of ['app@1', 'app@1', 'app@2'].entries()) {
      fingerprint = (await capture(t, project, { name: 'LookupError', message: `no item sku-${index}`, stack: PYTHON_STACK, release, environment: index ? 'production' : 'staging', service: 'orders', timestamp: ago(10 - index) })).groupFingerprint
    }
    await signIn(page, `${t.url}/p/${project.id}/errors/${fingerprint}`, t.viewerToken)
    const raw = page.locator('pre.stack')
    await raw.waitFor()
    const text = (await raw.textContent())!
    assert.match(text, /KeyError: 'sku-1'/, 'the first traceback of the chain')
    assert.match(text, /During handling of the above exception/)
    assert.match(text, /return cache\[key\]/, 'source lines')
    assert.match(text, /raise LookupError/)

    const nav = page.getByRole('navigation', { name: 'Occurrences' })
    await nav.getByText('1 of 3 stored').waitFor()
    await page.getByRole('article', { name: 'This occurrence' }).getByText('app@2').waitFor()
    await nav.getByRole('button', { name: 'Older →' }).click()
    await nav.getByText('2 of 3 stored').waitFor()
    await nav.getByRole('button', { name: 'Oldest' }).click()
    await nav.getByText('3 of 3 stored').waitFor()
    assert.match((await page.getByRole('article', { name: 'This occurrence' }).textContent())!, /staging/)
    assert.equal(await nav.getByRole('button', { name: 'Older →' }).isDisabled(), true)
    assert.ok(new URL(page.url()).searchParams.get('occurrence'), 'the occurrence shown is in the URL')
    await page.reload()
    await nav.getByText('3 of 3 stored').waitFor()

    await page.getByRole('button', { name: 'Frames' }).click()
    await page.locator('ol.frames').getByText('checkout').waitFor()

    const grouping = page.locator('section.grouping')
    await grouping.first().waitFor()
    const explanation = (await grouping.first().textContent())!
    assert.match(explanation, /✓ counted\s*exception: LookupError/)
    assert.match(explanation, /✓ counted\s*stacktrace/)
    assert.match(explanation, /✗ not counted\s*value/)

    const releases = page.getByRole('table', { name: 'Occurrences per release' })
    assert.match((await releases.getByRole('row').filter({ hasText: 'app@1' }).textContent())!, /2\s*\(67%\)/)
    assert.match((await page.getByRole('table', { name: 'Occurrences per environment' }).textContent())!, /production.*2.*staging.*1/s)
  })

  test('bulk triage on the stream, merge selected groups, and unmerge on the group page', async () => {
    const project = await createProject(t, 'triage')
    const first = await capture(t, project, { name: 'ErrorOne', message: 'first' })
    const second = await capture(t, project, { name: 'ErrorTwo', message: 'second' })
    await capture(t, project, { name: 'ErrorThree', message: 'third' })
    await signIn(page, `${t.url}/p/${project.id}/errors`, t.adminToken)

    await page.getByLabel('Select ErrorThree: third').check()
    await page.getByRole('button', { name: 'Resolve selected' }).click()
    await page.getByRole('row').filter({ hasText: 'ErrorThree' }).getByText('resolved', { exact: true }).waitFor()

    await page.getByLabel('Select ErrorOne: first').check()
    await page.getByLabel('Select ErrorTwo: second').check()
    await page.getByRole('button', { name: 'Merge selected' }).click()
    await page.getByRole('row').filter({ hasText: /ErrorOne|ErrorTwo/ }).first().waitFor()
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2)
    const merged = await t.request('GET', `/api/errors/groups/${second.fingerprint}`, { token: t.viewerToken })
    assert.equal(merged.body.fingerprints.length, 2)

    await page.getByRole('row').filter({ hasText: /ErrorOne|ErrorTwo/ }).getByRole('link').click()
    await page.locator('section.grouping').nth(1).waitFor()
    const mover = merged.body.fingerprint === first.fingerprint ? second.fingerprint : first.fingerprint
    await page.getByRole('button', { name: `Unmerge ${mover.slice(0, 12)}` }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Unmerge' }).click()
    await page.locator('section.grouping').nth(1).waitFor({ state: 'detached' })
    const apart = await t.request('GET', `/api/errors/groups/${mover}`, { token: t.viewerToken })
    assert.deepEqual(apart.body.fingerprints, [mover])
  })
})
