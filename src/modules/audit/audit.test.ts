import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`audit reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'admin console')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('audit', { actor: 'alice', action: 'user.deleted', resource: 'user/7', statusCode: 204 }, at(30)),
        event('audit', { actor: 'alice', action: 'user.created', resource: 'user/7', statusCode: 201 }, at(10)),
        event('audit', { actor: 'bob', action: 'login', statusCode: 401 }, at(20)),
      ])
      await ingestAll(t, other.project, [event('audit', { actor: 'mallory', action: 'login' }, at(40))])
    })
    after(() => t.close())

    test('who did what: actors with their latest action, most recently active first', async () => {
      // The window leaves out the portal's own audit of creating the project and its key, stamped now.
      const body = await read(t, `/api/modules/audit/actors?project_id=${project.id}&from=${at(0)}&to=${at(60)}`)
      assert.deepEqual(
        body.data.map((a: any) => [a.actor, a.actions, a.lastAction, a.lastResource, a.lastStatusCode]),
        [
          ['alice', 2, 'user.deleted', 'user/7', 204],
          ['bob', 1, 'login', null, 401],
        ],
      )
      const logins = await read(t, `/api/modules/audit/actors?project_id=${project.id}&action=login`)
      assert.deepEqual(logins.data.map((a: any) => a.actor), ['bob'])
    })

    test('the events list filters by actor, action, resource and status code, newest first', async () => {
      const alice = await read(t, `/api/modules/audit/events?project_id=${project.id}&actor=alice&resource=user/7`)
      assert.deepEqual(alice.data.map((e: any) => e.data.action), ['user.deleted', 'user.created'])
      const denied = await read(t, `/api/modules/audit/events?project_id=${project.id}&status_code=401`)
      assert.deepEqual(denied.data.map((e: any) => e.data.actor), ['bob'])
      const none = await read(t, `/api/modules/audit/events?project_id=${project.id}&status_code=500`)
      assert.deepEqual(none, { data: [], nextCursor: null })
    })

    test('other organisations get 404; bad parameters are named', async () => {
      await read(t, `/api/modules/audit/actors?project_id=${project.id}`, 404, other.token)
      assert.match((await read(t, `/api/modules/audit/events?project_id=${project.id}&status_code=abc`, 400)).detail, /query\.status_code/)
      assert.match((await read(t, `/api/modules/audit/events?project_id=${project.id}&status_code=99`, 400)).detail, /query\.status_code/)
      assert.match((await read(t, `/api/modules/audit/actors?project_id=${project.id}&who=x`, 400)).detail, /query\.who/)
    })
  })
}
