import { beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { createProject, type TestPortal, type TestProject } from '../support/portal.ts'
import { chromiumSuite, signIn } from './browser.ts'

// Sentry's triage on the error group page and the errors stream (issue 40 point 6) in real headless Chromium:
// resolve in the next release or in a release, ignore until more events or a time, the assignee on the list.
// UI flows do not depend on the database: SQLite.

describe('triage as Sentry users know it, in Chromium', () => {
  let t: TestPortal
  let page: Page
  const ui = chromiumSuite({ INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000' })
  beforeEach(() => ({ t, page } = ui))

  async function capture(project: TestProject, name: string, release?: string): Promise<string> {
    const response = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name, message: 'total is NaN', release } })
    assert.equal(response.status, 201, response.text)
    return response.body.groupFingerprint
  }
  const group = async (fingerprint: string) => (await t.request('GET', `/api/errors/groups/${fingerprint}`, { token: t.viewerToken })).body

  test('the group page resolves in the next release and in a release, ignores until more events, a time or more users, and says so', async () => {
    const project = await createProject(t, 'triaged')
    const fingerprint = await capture(project, 'CheckoutError', '1.0')
    await signIn(page, `${t.url}/p/${project.id}/errors/${fingerprint}`, t.adminToken)
    const triage = page.getByRole('group', { name: 'Triage' })
    const facts = page.locator('.facts').first()
    await triage.getByRole('button', { name: 'Resolve in next release' }).click()
    await facts.getByText('in the next release (after 1.0)').waitFor()
    assert.equal(await facts.locator('.badge').first().textContent(), 'resolved')

    // an occurrence of 1.0 leaves it resolved; one of 1.1 reopens it, and the page shows it regressed
    await capture(project, 'CheckoutError', '1.0')
    await page.reload()
    await facts.getByText('in the next release (after 1.0)').waitFor()
    await capture(project, 'CheckoutError', '1.1')
    await page.reload()
    await facts.locator('.badge', { hasText: 'regressed' }).waitFor()
    assert.deepEqual(await facts.locator('.badge').allTextContents(), ['unresolved', 'regressed'])

    await triage.getByRole('combobox', { name: 'Release it is fixed in' }).fill('2.0')
    await triage.getByRole('button', { name: 'Resolve in release' }).click()
    await facts.getByText('in release 2.0').waitFor()
    assert.equal((await group(fingerprint)).statusDetails.inRelease, '2.0')

    // ignored until 10 more events: the page counts down, and the tenth brings it back, marked unignored
    await triage.getByRole('combobox', { name: /^Ignore until/ }).selectOption({ label: '10 more events' })
    await triage.getByRole('button', { name: 'Ignore until' }).click()
    await facts.getByText('until 13 events (10 more)').waitFor()
    assert.equal(await facts.locator('.badge').first().textContent(), 'ignored')
    for (let n = 0; n < 9; n++) await capture(project, 'CheckoutError', '1.1')
    await page.reload()
    await facts.getByText('until 13 events (1 more)').waitFor()
    await capture(project, 'CheckoutError', '1.1')
    await page.reload()
    await facts.locator('.badge', { hasText: 'unignored' }).waitFor()
    assert.deepEqual(await facts.locator('.badge').allTextContents(), ['unresolved', 'unignored'])

    // ignored until a date and time chosen in the browser's zone (UTC here)
    await triage.getByRole('combobox', { name: /^Ignore until/ }).selectOption({ label: 'a date and time…' })
    const until = new Date(Date.now() + 3 * 3_600_000)
    await triage.getByLabel('Ignore until this time').fill(until.toISOString().slice(0, 16))
    await triage.getByRole('button', { name: 'Ignore until' }).click()
    await facts.getByText(/^until in [23] hr/).waitFor()
    assert.equal((await group(fingerprint)).statusDetails.ignoreUntil, `${until.toISOString().slice(0, 16)}:00.000Z`)

    await triage.getByRole('combobox', { name: /^Ignore until/ }).selectOption({ label: '10 more users' })
    await triage.getByRole('button', { name: 'Ignore until' }).click()
    await facts.getByText('until 10 users (10 more)').waitFor()
    await page.screenshot({ path: '/tmp/triage-group-page.png', fullPage: true })
  })

  test('the stream shows each group’s assignee and filters by me, by nobody and by a name', async () => {
    const project = await createProject(t, 'assigned')
    const ana = await capture(project, 'AnaError')
    const mine = await capture(project, 'MyError')
    await capture(project, 'NobodysError')
    const me = (await t.request('GET', '/api/me', { token: t.adminToken })).body.name
    for (const [fingerprint, assignee] of [[ana, 'oidc|ana'], [mine, me]]) {
      assert.equal((await t.request('PUT', `/api/errors/groups/${fingerprint}/assignee`, { token: t.adminToken, body: { assignee } })).status, 200)
    }
    await signIn(page, `${t.url}/p/${project.id}/errors`, t.adminToken)
    const rows = page.getByRole('table').last().getByRole('row')
    await rows.filter({ hasText: 'NobodysError' }).waitFor()
    const assigneeOf = async (name: string) => (await rows.filter({ hasText: name }).locator('td[data-label="Assignee"]').textContent())?.trim()
    assert.deepEqual([await assigneeOf('AnaError'), await assigneeOf('MyError'), await assigneeOf('NobodysError')], ['oidc|ana', me, '—'])
    const shown = async () => (await rows.locator('strong').allTextContents()).sort()
    const filters = page.getByRole('search')

    await filters.getByRole('combobox', { name: /^Assigned/ }).selectOption({ label: 'to me' })
    await filters.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/assigned=me/)
    await rows.filter({ hasText: 'AnaError' }).waitFor({ state: 'detached' })
    assert.deepEqual(await shown(), ['MyError'])

    await filters.getByRole('combobox', { name: /^Assigned/ }).selectOption({ label: 'to nobody' })
    await filters.getByRole('button', { name: 'Apply' }).click()
    await rows.filter({ hasText: 'NobodysError' }).waitFor()
    assert.deepEqual(await shown(), ['NobodysError'])

    await filters.getByRole('combobox', { name: /^Assigned/ }).selectOption({ label: 'to anyone or nobody' })
    await filters.getByRole('searchbox', { name: /^Assigned to/ }).fill('oidc|ana')
    await filters.getByRole('button', { name: 'Apply' }).click()
    await rows.filter({ hasText: 'AnaError' }).waitFor()
    assert.deepEqual(await shown(), ['AnaError'])
    await page.screenshot({ path: '/tmp/triage-stream.png', fullPage: true })
  })
})
