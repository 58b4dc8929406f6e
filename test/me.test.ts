import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { DIALECTS, createProject, startTestPortal, type TestPortal } from './support/portal.ts'

for (const dialect of DIALECTS) {
  describe(`GET /api/me on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(() => t.close())

    test('tells each access token its organisation, role and name', async () => {
      const admin = await t.request('GET', '/api/me', { token: t.adminToken })
      assert.equal(admin.status, 200)
      assert.deepEqual(Object.keys(admin.body).sort(), ['name', 'orgId', 'role', 'tokenId'])
      assert.equal(admin.body.role, 'admin')
      assert.equal(admin.body.name, 'test admin')
      const viewer = await t.request('GET', '/api/me', { token: t.viewerToken })
      assert.equal(viewer.body.role, 'viewer')
      assert.equal(viewer.body.orgId, admin.body.orgId)
      assert.notEqual(viewer.body.tokenId, admin.body.tokenId)
    })

    test('refuses a missing token (401) and an API key (403)', async () => {
      assert.equal((await t.request('GET', '/api/me')).status, 401)
      const project = await createProject(t)
      const byKey = await t.request('GET', '/api/me', { token: project.key })
      assert.equal(byKey.status, 403)
      assert.equal(byKey.body.code, 'access_token_required')
    })
  })
}
