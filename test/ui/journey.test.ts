import { beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { createProject, event, ingest, type TestPortal } from '../support/portal.ts'
import { chromiumSuite, signIn } from './browser.ts'
import { seedCheckoutIncident } from './seed-through-sdks.ts'

// The judge in real headless Chromium against a real portal (UI flows do not depend on the database: SQLite):
// a project seeded by the real OpenTelemetry and Sentry SDKs, investigated by following links only.

const MINUTE = 60_000

describe('an investigation in Chromium of a project seeded through OpenTelemetry and Sentry', () => {
  let t: TestPortal
  let page: Page
  const ui = chromiumSuite({ INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000' })
  beforeEach(() => ({ t, page } = ui))

  test('from the errors page, links alone lead from a Sentry error to its OpenTelemetry trace, the trace to its logs, and the error’s release to its deploy', async () => {
    const incident = await seedCheckoutIncident(t, 'checkout', 'checkout@2.0.0')
    await signIn(page, `${t.url}/p/${incident.project.id}/errors`, t.viewerToken)

    // error group → the trace and span its occurrence was captured in
    await page.getByRole('link', { name: /TypeError/ }).click()
    await page.waitForURL(/\/errors\/[^/?]+$/)
    await page.getByRole('link', { name: `Trace ${incident.traceId.slice(0, 8)}, span ${incident.failedSpanId}` }).click()
    await page.getByRole('heading', { name: 'POST /checkout' }).waitFor()
    assert.match(page.url(), new RegExp(`/traces/${incident.traceId}\\?span=${incident.failedSpanId}$`))
    await page.getByRole('list', { name: /^Spans/ }).getByRole('listitem').filter({ hasText: 'charge card' }).waitFor()

    // trace → its logs, both lines the service logged while serving it
    const signals = page.getByRole('region', { name: 'Signals of this trace' })
    await signals.getByRole('link', { name: /TypeError/ }).waitFor()
    await signals.getByRole('link', { name: 'Logs of this trace' }).click()
    await page.getByText(incident.failedLogMessage).waitFor()
    assert.equal(new URL(page.url()).searchParams.get('trace_id'), incident.traceId)
    assert.deepEqual(await page.locator('tbody tr .logline').allTextContents(), [incident.failedLogMessage, 'checkout started'])

    // logs → back to the trace → its error group → the group's release → the deploy of that release
    await page.getByRole('link', { name: 'Open the trace' }).click()
    await page.getByRole('region', { name: 'Signals of this trace' }).getByRole('link', { name: /TypeError/ }).click()
    await page.getByRole('table', { name: 'Occurrences per release' }).getByRole('link', { name: incident.release }).click()
    await page.waitForURL(/\/deploys\?/)
    const deployRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `New in ${incident.release}` }) })
    await deployRow.waitFor()
    assert.match((await deployRow.textContent())!, new RegExp(incident.deployCommit))
    // the deploy went out 20 minutes before the error: none in the hour before it, this one after
    await deployRow.getByText('0 before · 1 after so far').waitFor()
    await deployRow.getByRole('link', { name: `New in ${incident.release}` }).click()
    await page.getByRole('link', { name: /TypeError/ }).waitFor()
  })

  test('each deploy row counts the error events of the hour before it and of the hour after it', async () => {
    const project = await createProject(t, 'rollout')
    const deployedMs = Date.now() - 3 * 60 * MINUTE
    const at = (minutesFromDeploy: number) => new Date(deployedMs + minutesFromDeploy * MINUTE).toISOString()
    const deployed = await ingest(t, project, [event('deploy', { service: 'api', version: '3.1.0', environment: 'production', status: 'succeeded', commit: 'abc1234def' }, at(0))])
    assert.equal(deployed.status, 200, deployed.text)
    // One error in the hour before, five in the hour after, and one on each side just outside the two hours.
    for (const minutes of [-61, -30, 5, 10, 20, 40, 59, 61]) {
      const captured = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'TimeoutError', message: `upstream timed out (${minutes} min)`, timestamp: at(minutes) } })
      assert.equal(captured.status, 201, captured.text)
    }
    await signIn(page, `${t.url}/p/${project.id}/deploys`, t.viewerToken)
    const deployRow = page.getByRole('row').filter({ hasText: 'abc1234def' }).filter({ hasText: 'before' })
    await deployRow.getByText('1 before · 5 after').waitFor()
    assert.doesNotMatch((await deployRow.textContent())!, /so far/, 'the hour after the deploy is over')
  })
})
