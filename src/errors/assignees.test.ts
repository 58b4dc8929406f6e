import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, type TestPortal, type TestProject } from '../../test/support/portal.ts'
import { read, startReadsPortal } from '../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`assigning error groups on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let fingerprint: string
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      const capture = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'TypeError', message: 'boom' } })
      fingerprint = capture.body.fingerprint
    })
    after(() => t.close())

    test('an admin assigns a group to a person and unassigns it; each change is audited; people are the organisation’s token names', async () => {
      const before = await read(t, `/api/errors/groups/${fingerprint}/assignee`)
      assert.equal(before.assignee, null)
      assert.ok(before.people.length >= 2, before.people.join())
      const refused = await t.request('PUT', `/api/errors/groups/${fingerprint}/assignee`, { token: t.viewerToken, body: { assignee: 'ana' } })
      assert.equal(refused.status, 403)
      const assigned = await t.request('PUT', `/api/errors/groups/${fingerprint}/assignee`, { token: t.adminToken, body: { assignee: 'oidc|ana' } })
      assert.equal(assigned.status, 200, assigned.text)
      assert.equal(assigned.body.assignee, 'oidc|ana')
      assert.ok(assigned.body.people.includes('oidc|ana'))
      assert.equal((await read(t, `/api/errors/groups/${fingerprint}/assignee`)).assignee, 'oidc|ana')
      const cleared = await t.request('PUT', `/api/errors/groups/${fingerprint}/assignee`, { token: t.adminToken, body: { assignee: null } })
      assert.equal(cleared.body.assignee, null)
      const audit = await read(t, `/api/modules/audit/events?project_id=${project.id}&action=error.group.assigned`)
      assert.deepEqual(audit.data.map((e: any) => e.data.metadata.assignee), [null, 'oidc|ana'])
      const bad = await t.request('PUT', `/api/errors/groups/${fingerprint}/assignee`, { token: t.adminToken, body: { assignee: '' } })
      assert.equal(bad.status, 400)
      assert.match(bad.body.detail, /assignee/)
      await read(t, `/api/errors/groups/${'0'.repeat(64)}/assignee`, 404)
    })
  })
}
