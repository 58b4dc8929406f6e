import { beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SpanStatusCode } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import * as Sentry from '@sentry/node'
import type { Page } from 'playwright-core'
import { createProject, readAll, type TestPortal, type TestProject } from '../support/portal.ts'
import { chromiumSuite, signIn } from './browser.ts'
import { failCheckoutWithCauses } from '../support/error-chain.ts'

// The error group page and the errors stream (issue "the web UI becomes an investigation tool", point 3) in
// real headless Chromium, fed by @sentry/node and OpenTelemetry's Node SDK as their users set them up.

interface SdkKey {
  project: TestProject
  key: string
  sentryDsn: string
  otlpEndpoint: string
}

/** A project and a key for Sentry SDKs and OTLP exporters, as a user creates them. */
async function projectWithSdkKey(t: TestPortal, name: string): Promise<SdkKey> {
  const project = await createProject(t, name)
  const created = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: { name: 'sdks', scopes: ['sentry', 'otlp'] } })
  if (created.status !== 201) throw new Error(`key create: ${created.status} ${created.text}`)
  return { project, key: created.body.key, sentryDsn: created.body.sentryDsn, otlpEndpoint: created.body.otlpEndpoint }
}

/** Runs `send` against a Sentry client for the DSN and waits until everything it captured is delivered. */
async function withSentry(options: Sentry.NodeOptions, send: () => void) {
  Sentry.init({ defaultIntegrations: false, ...options })
  try {
    send()
    if (!(await Sentry.flush(5000))) throw new Error('Sentry did not flush')
  } finally {
    await Sentry.close(2000)
  }
}


function reserveStock(sku: string): Error {
  return new RangeError(`no stock left for ${sku}`)
}

/** `times` failed spans of `service`, each with the same exception recorded, exported over OTLP as the Node SDK does. */
async function recordStockFailures(sdk: SdkKey, service: string, times: number) {
  const exporter = new OTLPTraceExporter({ url: `${sdk.otlpEndpoint}/v1/traces`, headers: { authorization: `Bearer ${sdk.key}` } })
  const provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const tracer = provider.getTracer(service)
  for (let attempt = 0; attempt < times; attempt++) {
    const span = tracer.startSpan('reserve stock')
    span.recordException(reserveStock('sku-42'))
    span.setStatus({ code: SpanStatusCode.ERROR })
    span.end()
  }
  await provider.forceFlush()
  await provider.shutdown()
}

describe('the error group page and the errors stream in Chromium', () => {
  let t: TestPortal
  let page: Page
  const ui = chromiumSuite()
  beforeEach(() => ({ t, page } = ui))

  test('an Error with causes, captured by @sentry/node, shows every exception of the chain in order with its frames, as raw text and as frames', async () => {
    const sdk = await projectWithSdkKey(t, 'chained')
    // linkedErrorsIntegration (one of the SDK's defaults, which would otherwise hook this process) sends an Error's `cause` chain.
    await withSentry({ dsn: sdk.sentryDsn, release: 'shop@3.0.0', integrations: [Sentry.linkedErrorsIntegration()] }, () => Sentry.captureException(failCheckoutWithCauses()))
    const [group] = await readAll(t, `/api/errors/groups?project_id=${sdk.project.id}`)
    await signIn(page, `${t.url}/p/${sdk.project.id}/errors/${group.fingerprint}`, t.viewerToken)

    const occurrence = page.getByRole('article', { name: 'This occurrence' })
    const raw = (await occurrence.locator('pre.stack').textContent())!.split('\n')
    const headings = raw.filter((line) => !line.startsWith('    at '))
    assert.deepEqual(headings, ['Error: checkout failed', 'Caused by: Error: payment declined', 'Caused by: TypeError: card is undefined'])
    const innermostFrameAfter = (heading: string) => raw[raw.indexOf(heading) + 1]
    assert.match(innermostFrameAfter('Error: checkout failed'), /^ {4}at failCheckoutWithCauses \(/)
    assert.match(innermostFrameAfter('Caused by: Error: payment declined'), /^ {4}at chargeCard \(/)
    assert.match(innermostFrameAfter('Caused by: TypeError: card is undefined'), /^ {4}at readCard \(/)

    await occurrence.getByRole('button', { name: 'Frames' }).click()
    assert.match((await occurrence.locator('ol.frames').first().locator('li').first().textContent())!, /^failCheckoutWithCauses\b/)
    const causes = occurrence.getByRole('region', { name: 'Chained exceptions' }).locator('.chained')
    await causes.first().locator('ol.frames').waitFor()
    assert.equal(await causes.count(), 2)
    const shown = await causes.evaluateAll((elements) => elements.map((cause) => [cause.querySelector('h4')?.textContent, cause.querySelector('ol.frames li code')?.textContent]))
    assert.deepEqual(shown, [
      ['Caused by Error: payment declined', 'chargeCard'],
      ['Caused by TypeError: card is undefined', 'readCard'],
    ])
  })

  test('the breakdown by service counts the occurrences each service sent', async () => {
    const sdk = await projectWithSdkKey(t, 'two services')
    for (const [service, times] of [['checkout', 3], ['billing', 2]] as const) await recordStockFailures(sdk, service, times)
    const groups = await readAll(t, `/api/errors/groups?project_id=${sdk.project.id}`)
    assert.equal(groups.length, 1, 'the same exception from both services is one group')
    await signIn(page, `${t.url}/p/${sdk.project.id}/errors/${groups[0].fingerprint}`, t.viewerToken)

    const services = page.getByRole('table', { name: 'Occurrences per service' })
    await services.getByRole('row').filter({ hasText: 'billing' }).waitFor()
    const rows = await services.locator('tbody tr').evaluateAll((elements) => elements.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent!.trim())))
    assert.deepEqual(rows, [
      ['checkout', '3 (60%)'],
      ['billing', '2 (40%)'],
    ])
  })

  test('Ignore selected on the stream ignores the selected groups and leaves the others', async () => {
    const sdk = await projectWithSdkKey(t, 'bulk ignore')
    await withSentry({ dsn: sdk.sentryDsn }, () => {
      Sentry.captureException(new RangeError('quantity out of range'))
      Sentry.captureException(new SyntaxError('coupon code malformed'))
      Sentry.captureException(new TypeError('cart is undefined'))
    })
    const groups = await readAll(t, `/api/errors/groups?project_id=${sdk.project.id}`)
    assert.equal(groups.length, 3)
    await signIn(page, `${t.url}/p/${sdk.project.id}/errors`, t.adminToken)

    await page.getByLabel('Select RangeError: quantity out of range').check()
    await page.getByLabel('Select SyntaxError: coupon code malformed').check()
    await page.getByRole('group', { name: 'Selected groups' }).getByText('2 selected:').waitFor()
    await page.getByRole('button', { name: 'Ignore selected' }).click()
    for (const name of ['RangeError', 'SyntaxError']) await page.getByRole('row').filter({ hasText: name }).getByText('ignored', { exact: true }).waitFor()

    const statuses = Object.fromEntries((await readAll(t, `/api/errors/groups?project_id=${sdk.project.id}`)).map((group) => [group.name, group.status]))
    assert.deepEqual(statuses, { RangeError: 'ignored', SyntaxError: 'ignored', TypeError: 'unresolved' })
  })
})
