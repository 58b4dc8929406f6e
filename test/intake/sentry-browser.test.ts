import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from 'esbuild'
import { openBrowser, type Browser } from '../ui/browser.ts'
import { DIALECTS, createProject, readAll, startTestPortal, type TestPortal } from '../support/portal.ts'

/** @sentry/browser bundled as a page would load it, `window.Sentry`. */
async function sentryBrowserBundle(): Promise<string> {
  const result = await build({
    stdin: { contents: "import * as Sentry from '@sentry/browser'; window.Sentry = Sentry", resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    format: 'iife',
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0].text
}

/** A site on another loopback origin (`localhost`, where the portal is `127.0.0.1`) serving a page that loads the SDK. */
async function siteServing(bundle: string): Promise<{ origin: string; close(): void }> {
  const site = http.createServer((request, response) => {
    if (request.url === '/sentry.js') return void response.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle)
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title><script src="/sentry.js"></script>')
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  return { origin: `http://localhost:${(site.address() as AddressInfo).port}`, close: () => site.close() }
}

for (const dialect of DIALECTS) {
  describe(`@sentry/browser on another origin (${dialect})`, () => {
    let t: TestPortal
    let browser: Browser
    let site: { origin: string; close(): void }

    before(async () => {
      t = await startTestPortal(dialect)
      site = await siteServing(await sentryBrowserBundle())
      browser = await openBrowser()
    })
    after(async () => {
      await browser.close()
      site.close()
      await t.close()
    })

    test('Chromium posts the envelope cross-origin, the preflight and the answer carry Sentry’s CORS headers, and the exception is grouped', async () => {
      const project = await createProject(t, 'browser shop')
      const created = await t.request('POST', `/api/projects/${project.id}/keys`, { token: t.adminToken, body: { name: 'browser', scopes: ['sentry'] } })
      const dsn: string = created.body.sentryDsn
      const page = await browser.context.newPage()
      const failed: string[] = []
      const envelopeAnswers: number[] = []
      page.on('requestfailed', (request) => failed.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`))
      page.on('response', (response) => {
        if (response.url().includes('/envelope/')) envelopeAnswers.push(response.status())
      })
      await page.goto(site.origin)
      const outcome = await page.evaluate(async (dsn) => {
        const Sentry = (window as any).Sentry
        Sentry.init({ dsn, release: 'browser@1', defaultIntegrations: false })
        Sentry.captureException(new TypeError('cart is undefined in the browser'))
        const flushed = await Sentry.flush(5000)
        // As a tunnel or a custom transport would: a preflighted POST with X-Sentry-Auth, and its answer read.
        const url = new URL(dsn)
        const envelopeUrl = `${url.protocol}//${url.host}/api${url.pathname}/envelope/`
        const answer = await fetch(envelopeUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-sentry-envelope', 'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${url.username}` },
          body: [JSON.stringify({ event_id: 'a'.repeat(32) }), JSON.stringify({ type: 'event' }), JSON.stringify({ event_id: 'a'.repeat(32), message: 'preflighted', level: 'info' })].join('\n'),
        })
        return { flushed, status: answer.status, body: await answer.json() }
      }, dsn)
      assert.deepEqual(failed, [], 'no request blocked by CORS')
      assert.equal(outcome.flushed, true)
      assert.equal(outcome.status, 200)
      assert.equal(outcome.body.id, 'a'.repeat(32), 'the page reads the answer')
      assert.ok(envelopeAnswers.includes(200), `the SDK's envelope answered ${envelopeAnswers}`)
      const groups = await readAll(t, `/api/errors/groups?project_id=${project.id}&release=browser@1`)
      assert.equal(groups.length, 1)
      assert.equal(groups[0].name, 'TypeError')
      const preflight = await fetch(`${t.url}/api/${dsn.split('/').pop()}/envelope/`, {
        method: 'OPTIONS',
        headers: { origin: site.origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-sentry-auth' },
      })
      assert.equal(preflight.status, 200)
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*')
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /x-sentry-auth/)
      await page.close()
    })
  })
}
