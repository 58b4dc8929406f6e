import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { modules } from '../src/modules/registry.ts'
import { DIALECTS, createProject, event, ingest, startTestPortal, type TestPortal, type TestResponse } from './support/portal.ts'

for (const dialect of DIALECTS) {
  describe(`OpenAPI document on ${dialect}`, () => {
    let t: TestPortal
    let document: any
    before(async () => {
      t = await startTestPortal(dialect)
      document = (await t.request('GET', '/api/openapi.json', { token: t.viewerToken })).body
    })
    after(() => t.close())

    test('is a valid OpenAPI 3.1.0 document by an independent validator', async () => {
      assert.equal(document.openapi, '3.1.0')
      const result = await new Validator().validate(document)
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000))
    })

    test('needs a bearer, and any access token or API key may read it', async () => {
      assert.equal((await t.request('GET', '/api/openapi.json')).status, 401)
      const p = await createProject(t)
      assert.equal((await t.request('GET', '/api/openapi.json', { token: p.key })).status, 200)
    })

    test('documents every spec path, the ingest headers, and the security schemes', () => {
      const paths = Object.keys(document.paths)
      for (const path of ['/api/ingest', '/api/health', '/api/projects', '/api/projects/{id}', '/api/projects/{id}/keys', '/api/projects/{id}/keys/{kid}', '/api/openapi.json']) {
        assert.ok(paths.includes(path), path)
      }
      for (const module of modules) {
        assert.ok(paths.includes(`${module.basePath}/status`), module.basePath)
        assert.ok(paths.includes(`${module.basePath}/events`), module.basePath)
      }
      const ingestOp = document.paths['/api/ingest'].post
      const headers = ingestOp.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name)
      assert.ok(headers.includes('x-service-signature'))
      assert.ok(headers.includes('x-service-idempotency-key'))
      assert.deepEqual(Object.keys(ingestOp.responses).sort(), ['200', '400', '401', '403', '409', '413', '415', '429', '431', '503'])
      assert.deepEqual(ingestOp.security, [{ apiKey: [] }])
      assert.deepEqual(document.paths['/api/health'].get.security, [])
      assert.ok(document.components.securitySchemes.accessToken && document.components.securitySchemes.apiKey)
    })

    test('real responses match the schemas the document gives for them', async () => {
      const ajv = new Ajv2020({ strict: false, allErrors: true })
      addFormats.default(ajv)
      const p = await createProject(t)
      await ingest(t, p, [event('log', { message: 'm', level: 'info' }), event('cost', { amount: 1, currency: 'EUR' })])
      const checks: [string, string, TestResponse][] = [
        ['/api/health', 'get', await t.request('GET', '/api/health')],
        ['/api/projects', 'get', await t.request('GET', '/api/projects', { token: t.adminToken })],
        ['/api/projects', 'post', await t.request('POST', '/api/projects', { token: t.adminToken, body: { name: 'doc' } })],
        ['/api/projects', 'post', await t.request('POST', '/api/projects', { token: t.adminToken, body: {} })],
        ['/api/projects/{id}', 'get', await t.request('GET', `/api/projects/${p.id}`, { token: t.adminToken })],
        ['/api/projects/{id}', 'get', await t.request('GET', '/api/projects/prj_missing', { token: t.adminToken })],
        ['/api/projects/{id}/keys', 'get', await t.request('GET', `/api/projects/${p.id}/keys`, { token: t.adminToken })],
        ['/api/projects/{id}/keys', 'post', await t.request('POST', `/api/projects/${p.id}/keys`, { token: t.adminToken, body: {} })],
        ['/api/ingest', 'post', await ingest(t, p, [event('log', { message: 'x' }), event('audit', {})])],
        ['/api/ingest', 'post', await ingest(t, p, '{')],
        ['/api/ingest', 'post', await ingest(t, { ...p, key: 'pk_nope' }, [])],
        ['/api/modules/logs/events', 'get', await t.request('GET', `/api/modules/logs/events?project_id=${p.id}`, { token: t.adminToken })],
        ['/api/modules/costs/events', 'get', await t.request('GET', `/api/modules/costs/events?project_id=${p.id}`, { token: t.adminToken })],
        ['/api/modules/logs/status', 'get', await t.request('GET', `/api/modules/logs/status?project_id=${p.id}`, { token: t.adminToken })],
      ]
      for (const [path, method, response] of checks) {
        const documented = document.paths[path][method].responses[String(response.status)]
        assert.ok(documented, `${method} ${path} returned ${response.status}, which the document does not list`)
        const [mediaType, entry] = Object.entries(documented.content ?? {})[0] as [string, any]
        assert.ok(response.headers.get('content-type')?.startsWith(mediaType), `${method} ${path} ${response.status}: ${response.headers.get('content-type')} vs ${mediaType}`)
        const validate = ajv.compile(entry.schema)
        assert.ok(validate(response.body), `${method} ${path} ${response.status}: ${JSON.stringify(validate.errors)}`)
      }
    })
  })
}
