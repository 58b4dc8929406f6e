import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createAccessToken, createOrganization } from '../../src/identity/store.ts'
import { createProject, DIALECTS, startTestPortal, type TestPortal } from '../support/portal.ts'
import { createEndpoint, FAST_WEBHOOKS } from './api.ts'

for (const dialect of DIALECTS) {
  describe(`webhook endpoints on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startTestPortal(dialect, FAST_WEBHOOKS)
    })
    after(() => t.close())

    test('the secret is shown at creation only, and stored encrypted', async () => {
      const project = await createProject(t)
      const created = await createEndpoint(t, project.id, 'https://hooks.example.com/in', { description: 'billing', eventTypes: ['invoice.paid'] })
      assert.match(created.id, /^whe_/)
      assert.match(created.secretId, /^whs_/)
      assert.equal(created.kind, 'generic')
      assert.equal(created.enabled, true)
      assert.deepEqual(created.eventTypes, ['invoice.paid'])
      const read = await t.request('GET', `/api/webhooks/endpoints/${created.id}`, { token: t.viewerToken })
      const list = await t.request('GET', `/api/webhooks/endpoints?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(read.status, 200)
      assert.deepEqual(list.body.data.map((e: any) => e.id), [created.id])
      for (const text of [read.text, list.text]) assert.ok(!text.includes(created.secret) && !text.includes('whsec_'))
      assert.equal(read.body.secret, undefined)
      const stored = await t.portal.ctx.storage.db.selectFrom('webhook_endpoint_secrets' as any).selectAll().execute()
      assert.ok(stored.every((row: any) => !String(row.secret_encrypted).includes(created.secret.slice(6))))
      assert.ok(!t.logs.join('').includes(created.secret.slice(6)), 'the secret never reaches a log')
    })

    test('an endpoint is updated, disabled by hand, re-enabled and deleted', async () => {
      const project = await createProject(t)
      const created = await createEndpoint(t, project.id, 'https://hooks.example.com/a')
      const patched = await t.request('PATCH', `/api/webhooks/endpoints/${created.id}`, {
        token: t.adminToken,
        body: { url: 'https://hooks.example.com/b', kind: 'slack', eventTypes: ['x.y'], enabled: false },
      })
      assert.equal(patched.status, 200, patched.text)
      assert.equal(patched.body.url, 'https://hooks.example.com/b')
      assert.equal(patched.body.kind, 'slack')
      assert.equal(patched.body.enabled, false)
      assert.equal(patched.body.disabledReason, 'manual')
      const enabled = await t.request('PATCH', `/api/webhooks/endpoints/${created.id}`, { token: t.adminToken, body: { enabled: true } })
      assert.equal(enabled.body.enabled, true)
      assert.equal(enabled.body.disabledReason, null)
      const deleted = await t.request('DELETE', `/api/webhooks/endpoints/${created.id}`, { token: t.adminToken })
      assert.equal(deleted.status, 204)
      assert.equal((await t.request('GET', `/api/webhooks/endpoints/${created.id}`, { token: t.viewerToken })).status, 404)
      const list = await t.request('GET', `/api/webhooks/endpoints?project_id=${project.id}`, { token: t.viewerToken })
      assert.deepEqual(list.body.data, [])
    })

    test('rotation returns a new secret once and dates the previous one’s end of grace', async () => {
      const project = await createProject(t)
      const created = await createEndpoint(t, project.id, 'https://hooks.example.com/r')
      const rotated = await t.request('POST', `/api/webhooks/endpoints/${created.id}/rotate`, { token: t.adminToken })
      assert.equal(rotated.status, 200, rotated.text)
      assert.equal(rotated.body.id, created.id)
      assert.match(rotated.body.secret, /^whsec_/)
      assert.notEqual(rotated.body.secret, created.secret)
      assert.notEqual(rotated.body.secretId, created.secretId)
      const grace = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()
      assert.ok(grace > 86_000_000 && grace <= 86_400_000, `grace ${grace} ms`)
      const audit = await t.request('GET', `/api/modules/audit/events?project_id=${project.id}`, { token: t.viewerToken })
      const actions = audit.body.data.map((e: any) => e.data.action)
      assert.ok(actions.includes('webhook.endpoint.created') && actions.includes('webhook.endpoint.secret_rotated'))
      assert.ok(!audit.text.includes('whsec_'))
    })

    test('bad input is a 400 naming the field', async () => {
      const project = await createProject(t)
      const cases: [unknown, RegExp][] = [
        [{ projectId: project.id, url: 'ftp://x' }, /body\.url/],
        [{ projectId: project.id, url: 'https://x.example', kind: 'teams' }, /body\.kind/],
        [{ projectId: project.id, url: 'https://x.example', eventTypes: ['has space'] }, /body\.eventTypes/],
        [{ projectId: project.id, url: 'https://x.example', secret: 'mine' }, /body\.secret: is not a known field/],
        [{ url: 'https://x.example' }, /body\.projectId: required/],
      ]
      for (const [body, detail] of cases) {
        const res = await t.request('POST', '/api/webhooks/endpoints', { token: t.adminToken, body })
        assert.equal(res.status, 400, JSON.stringify(body))
        assert.match(res.body.detail, detail)
      }
      const empty = await t.request('PATCH', '/api/webhooks/endpoints/whe_x', { token: t.adminToken, body: {} })
      assert.equal(empty.status, 400)
    })

    test('viewers read but do not manage; API keys do neither; other organisations see 404', async () => {
      const project = await createProject(t)
      const created = await createEndpoint(t, project.id, 'https://hooks.example.com/v')
      const viewerCreate = await t.request('POST', '/api/webhooks/endpoints', { token: t.viewerToken, body: { projectId: project.id, url: 'https://x.example' } })
      assert.equal(viewerCreate.status, 403)
      assert.equal((await t.request('POST', `/api/webhooks/endpoints/${created.id}/rotate`, { token: t.viewerToken })).status, 403)
      assert.equal((await t.request('GET', `/api/webhooks/endpoints/${created.id}`, { token: project.key })).status, 403)
      const other = await createOrganization(t.portal.ctx.storage.db, 'other')
      const stranger = (await createAccessToken(t.portal.ctx.storage.db, { orgId: other.id, role: 'admin', name: 'stranger' })).token
      for (const [method, path] of [
        ['GET', `/api/webhooks/endpoints/${created.id}`],
        ['DELETE', `/api/webhooks/endpoints/${created.id}`],
        ['POST', `/api/webhooks/endpoints/${created.id}/rotate`],
        ['GET', `/api/webhooks/endpoints?project_id=${project.id}`],
      ]) {
        assert.equal((await t.request(method, path, { token: stranger })).status, 404, `${method} ${path}`)
      }
      const deliver = await t.request('POST', '/api/webhooks/deliver', { token: stranger, body: { projectId: project.id, eventType: 'x', payload: {} } })
      assert.equal(deliver.status, 404)
    })

    test('the OpenAPI document describes the webhooks routes and their answers', async () => {
      const doc = (await t.request('GET', '/api/openapi.json', { token: t.viewerToken })).body
      for (const path of ['/api/webhooks/endpoints', '/api/webhooks/endpoints/{id}', '/api/webhooks/endpoints/{id}/rotate', '/api/webhooks/endpoints/{id}/recover', '/api/webhooks/deliver', '/api/webhooks/deliveries', '/api/webhooks/deliveries/{id}', '/api/webhooks/deliveries/{id}/retry', '/api/webhooks/status']) {
        assert.ok(doc.paths[path], path)
      }
      assert.deepEqual(Object.keys(doc.paths['/api/webhooks/deliver'].post.responses).sort(), ['202', '400', '401', '403', '404', '413', '415', '422', '431', '503'])
      const status = doc.paths['/api/webhooks/status'].get.responses['200'].content['application/json'].schema
      assert.ok(doc.components.schemas[status.$ref.split('/').pop()].properties.queueDepth)
    })
  })
}
