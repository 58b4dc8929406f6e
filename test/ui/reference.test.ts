import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { startTestPortal, type TestPortal } from '../support/portal.ts'
import { openBrowser, signIn, type Browser } from './browser.ts'

// The reference renders the live document, which does not depend on the database: one portal suffices.
describe('the API reference in Chromium', () => {
  let t: TestPortal
  let browser: Browser
  before(async () => {
    t = await startTestPortal('sqlite')
    browser = await openBrowser()
  })
  after(async () => {
    await browser.close()
    await t.close()
  })

  test('is reached from the UI and renders the live document from the portal alone', async () => {
    const page = await browser.context.newPage()
    // 3.5 MB of renderer to parse: on a loaded two-core machine that is more than the default 10 s.
    page.setDefaultTimeout(60_000)
    const foreign: string[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== new URL(t.url).origin && !request.url().startsWith('data:')) foreign.push(request.url())
    })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await signIn(page, t.url, t.viewerToken)
    await page.getByRole('link', { name: 'API reference' }).click()
    await page.waitForURL(`${t.url}/reference/`, { waitUntil: 'commit' })
    // The document's title and description, and its tags with their descriptions, as the live document gives them.
    await page.getByRole('heading', { name: 'Observability Portal' }).waitFor()
    await page.getByText('Errors are RFC 9457 problem details').waitFor()
    await page.getByText('Whether the portal can serve: for load balancers and probes').waitFor()
    await page.getByText('api keys', { exact: true }).first().waitFor()
    assert.deepEqual(foreign, [], 'nothing is loaded from outside the portal')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('asks to sign in first when the tab has no session', async () => {
    const page = await browser.context.newPage()
    page.setDefaultTimeout(60_000)
    await page.goto(`${t.url}/reference/`)
    await page.getByText('Sign in to the portal first', { exact: false }).waitFor()
    await page.close()
  })
})
