import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Fastify from 'fastify'
import { uiPlugin } from '../../src/http/ui.ts'
import { startTestPortal, type TestPortal } from '../support/portal.ts'

// Serving the app does not touch the database: SQLite is enough.
describe('the portal serves the web UI outside /api/', () => {
  let t: TestPortal
  let script: string
  before(async () => {
    t = await startTestPortal('sqlite')
    script = /src="(\/assets\/[^"]+\.js)"/.exec((await t.request('GET', '/')).text)![1]
  })
  after(() => t.close())

  test('/ is the app, without a token, with a strict content security policy and no caching', async () => {
    const page = await t.request('GET', '/')
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type')!, /^text\/html/)
    assert.match(page.text, /<div id="app">/)
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/)
    assert.equal(page.headers.get('cache-control'), 'no-cache')
  })

  test('an app route with filters gets the same page, so that a shared URL opens', async () => {
    const [root, deep] = await Promise.all([t.request('GET', '/'), t.request('GET', '/p/prj_x/logs?level=error&q=timeout')])
    assert.equal(deep.status, 200)
    assert.equal(deep.text, root.text)
  })

  test('built assets are served gzipped on request and cached for good', async () => {
    const plain = await fetch(t.url + script, { headers: { 'accept-encoding': 'identity' } })
    assert.equal(plain.status, 200)
    assert.match(plain.headers.get('content-type')!, /^text\/javascript/)
    assert.match(plain.headers.get('cache-control')!, /immutable/)
    const body = await plain.text()
    const zipped = await fetch(t.url + script, { headers: { 'accept-encoding': 'gzip' } })
    assert.equal(zipped.headers.get('content-encoding'), 'gzip')
    assert.equal(await zipped.text(), body)
  })

  test('a missing file is a 404, not the app', async () => {
    const missing = await t.request('GET', '/assets/nope-123.js')
    assert.equal(missing.status, 404)
    assert.doesNotMatch(missing.text, /<div id="app">/)
  })

  test('unknown paths under /api/ stay problem+json 404s', async () => {
    for (const url of ['/api/nope', '/api', '/api/projects/prj_1/nothing']) {
      const answer = await t.request('GET', url, { token: t.adminToken })
      assert.equal(answer.status, 404, url)
      assert.match(answer.headers.get('content-type')!, /^application\/problem\+json/, url)
      assert.equal(answer.body.code, 'not_found', url)
    }
    const post = await t.request('POST', '/somewhere', { body: {} })
    assert.equal(post.status, 404)
    assert.equal(post.body.code, 'not_found')
  })

  test('the OpenAPI document lists /api/me and not the app', async () => {
    const document = (await t.request('GET', '/api/openapi.json', { token: t.viewerToken })).body
    assert.ok(document.paths['/api/me'])
    // Prometheus scrapes /metrics by convention and Grafana's data sources read Loki's, Tempo's and Prometheus' paths
    // (docs/grafana.md); every other operation is under /api/, and no page of the app is one.
    assert.deepEqual(Object.keys(document.paths).filter((route) => !/^\/(api|loki|tempo|prometheus)\//.test(route)), ['/metrics'])
    assert.ok(document.paths['/loki/api/v1/query_range'] && document.paths['/tempo/api/search'] && document.paths['/prometheus/api/v1/query'])
  })
})

describe('without a built UI', () => {
  test('every app path answers 503 with a page that says how to build it, and the API is untouched', async () => {
    const emptyDist = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-ui-'))
    const app = Fastify({ logger: false })
    await app.register(uiPlugin, { distDir: emptyDist })
    const page = await app.inject({ method: 'GET', url: '/p/prj_1/logs' })
    assert.equal(page.statusCode, 503)
    assert.match(page.body, /npm run build:ui/)
    const api = await app.inject({ method: 'GET', url: '/api/nope' })
    assert.equal(api.statusCode, 404)
    assert.equal(api.json().code, 'not_found')
    await app.close()
    fs.rmSync(emptyDist, { recursive: true })
  })
})
