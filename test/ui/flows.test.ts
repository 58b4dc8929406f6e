import { after, afterEach, before, beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'
import { openBrowser, recordApiRequests, signIn, type Browser } from './browser.ts'
import { seedShop } from './seed.ts'

// End-to-end in real headless Chromium against a real portal; UI flows do not depend on the database, so SQLite.
describe('web UI in Chromium', () => {
  let t: TestPortal
  let browser: Browser
  let shop: TestProject
  let page: Page
  before(async () => {
    t = await startTestPortal('sqlite', { LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0' })
    shop = await seedShop(t)
    browser = await openBrowser()
  })
  after(async () => {
    await browser.close()
    await t.close()
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
    await page.getByLabel('New project name').fill('ui-made')
    await page.getByRole('button', { name: 'Create project' }).click()
    const row = page.getByRole('row').filter({ hasText: 'ui-made' })
    await row.waitFor()
    await row.getByRole('button', { name: 'Rename' }).click()
    await row.getByLabel('Name').fill('ui-renamed')
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

  test('keyboard only: sign in with Enter, reach a section by Tab, open it with Enter', async () => {
    await page.goto(t.url)
    await page.keyboard.type(t.adminToken)
    await page.keyboard.press('Enter')
    const shopLink = page.getByRole('link', { name: 'shop' })
    await shopLink.waitFor()
    for (let presses = 0; presses < 30 && !(await shopLink.evaluate((link) => link === document.activeElement)); presses++) await page.keyboard.press('Tab')
    assert.notEqual(await shopLink.evaluate((link) => getComputedStyle(link).outlineStyle), 'none', 'focus is visible')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Errors' }).waitFor()
  })
})
