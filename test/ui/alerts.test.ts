import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, event, ingest, startTestPortal, type TestPortal } from '../support/portal.ts'
import { FAST_WEBHOOKS, createEndpoint } from '../webhooks/api.ts'
import { startReceiver, type Receiver } from '../webhooks/receiver.ts'
import { openBrowser, signIn, type Browser } from './browser.ts'

let t: TestPortal
let browser: Browser
let receiver: Receiver
before(async () => {
  t = await startTestPortal('sqlite', { ...FAST_WEBHOOKS, WEBHOOK_TIMEOUT_MS: '10000' })
  receiver = await startReceiver()
  browser = await openBrowser()
})
after(async () => {
  await browser?.close()
  await receiver?.close()
  await t?.close()
})

test('an admin writes a rule with its preview and thresholds drawn, evaluates it, and sees it fire in the history', async () => {
  const project = await createProject(t, 'alerting shop')
  const endpoint = await createEndpoint(t, project.id, receiver.url('/ui-alerts'), { eventTypes: ['alert.firing'] })
  await ingest(t, project, Array.from({ length: 3 }, (_, i) => event('log', { message: `checkout failed ${i}`, level: 'error' })))
  const page = await browser.context.newPage()
  await signIn(page, `${t.url}/p/${project.id}`, t.adminToken)
  await page.getByRole('link', { name: 'Alerts', exact: true }).click()
  await page.getByRole('heading', { name: 'Alerts' }).waitFor()
  await page.getByRole('button', { name: 'New rule' }).click()
  const form = page.getByRole('form', { name: 'New rule' })
  await form.getByLabel('Name', { exact: true }).fill('checkout errors')
  await form.getByLabel('Signal').selectOption('logs.count')
  await form.getByLabel(/^Filters/).fill('level=error')
  await form.getByLabel('Window (minutes)').fill('5')
  await form.getByLabel('Critical').fill('2')
  await form.getByLabel('Warning').fill('1')
  await form.getByLabel(new RegExp(endpoint.url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))).check()
  await form.getByRole('button', { name: 'Preview 24 h' }).click()
  await form.getByText(/Would have fired 1 time/).waitFor()
  const drawn = await form.locator('svg[aria-label="Preview with thresholds"] .threshold text').allTextContents()
  assert.deepEqual(drawn, ['critical 2', 'warning 1'])
  await form.getByRole('button', { name: 'Create rule' }).click()
  await page.getByRole('heading', { name: 'checkout errors' }).waitFor()
  await page.getByRole('button', { name: 'Evaluate now' }).click()
  await page.locator('table').first().getByText('firing').waitFor()
  await page.reload()
  // The history is the table with a Threshold column: it may answer after the instances' table, which also says firing.
  const history = page.locator('table', { has: page.getByRole('columnheader', { name: 'Threshold' }) })
  await history.getByText('firing').first().waitFor()
  assert.match((await history.textContent())!, /ok.*firing.*3.*2/s)
  const listed = await t.request('GET', `/api/alerts/rules?project_id=${project.id}`, { token: t.viewerToken })
  assert.deepEqual(listed.body.data.map((rule: any) => [rule.name, rule.state, rule.filters]), [['checkout errors', 'firing', { level: 'error' }]])
  await page.close()
})
