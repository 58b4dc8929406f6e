import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`deploys reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      const sibling = await createProject(t, 'sibling')
      other = await otherOrganisation(t)
      // Sent out of time order: the latest api/production deploy (v3, failed) arrives first.
      await ingestAll(t, project, [
        event('deploy', { service: 'api', environment: 'production', version: 'v3', status: 'Failed', commit: 'c3' }, at(30)),
        event('deploy', { service: 'api', environment: 'production', version: 'v1', status: 'succeeded' }, at(0)),
        event('deploy', { service: 'api', environment: 'production', version: 'v2', status: 'succeeded' }, at(10)),
        event('deploy', { service: 'api', environment: 'staging', version: 'v4', status: 'succeeded' }, at(40)),
        event('deploy', { service: 'web', version: 'w1', status: 'succeeded' }, at(20)),
      ])
      await ingestAll(t, sibling, [event('deploy', { service: 'api', environment: 'production', version: 'x9', status: 'succeeded' }, at(50))])
      await ingestAll(t, other.project, [event('deploy', { service: 'api', environment: 'production', version: 'y9' }, at(60))])
    })
    after(() => t.close())

    test('lists the latest deploy per service and environment, most recent first, with failures flagged', async () => {
      const body = await read(t, `/api/modules/deploys/latest?project_id=${project.id}`)
      assert.deepEqual(
        body.data.map((d: any) => [d.service, d.environment, d.version, d.failed, d.deploys]),
        [
          ['api', 'staging', 'v4', false, 1],
          ['api', 'production', 'v3', true, 3],
          ['web', null, 'w1', false, 1],
        ],
      )
      assert.equal(body.data[1].commit, 'c3')
      assert.equal(body.data[1].deployedAt, at(30))
      assert.equal(body.nextCursor, null)
    })

    test('pages that end exactly at the limit have no next cursor after the last', async () => {
      const first = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&limit=2`)
      assert.equal(first.data.length, 2)
      assert.ok(first.nextCursor)
      const second = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&limit=2&cursor=${first.nextCursor}`)
      assert.deepEqual(second.data.map((d: any) => d.service), ['web'])
      assert.equal(second.nextCursor, null)
      const exact = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&limit=3`)
      assert.equal(exact.data.length, 3)
      assert.equal(exact.nextCursor, null)
    })

    test('filters narrow the groups; a filter with no match gives an empty list', async () => {
      const staging = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&environment=staging`)
      assert.deepEqual(staging.data.map((d: any) => d.version), ['v4'])
      const none = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&service=nothing`)
      assert.deepEqual(none, { data: [], nextCursor: null })
    })

    test('history per service is the events list, newest first', async () => {
      const body = await read(t, `/api/modules/deploys/events?project_id=${project.id}&service=api&environment=production`)
      assert.deepEqual(body.data.map((e: any) => e.data.version), ['v3', 'v2', 'v1'])
    })

    test('another organisation gets 404 for the project; bad parameters get a 400 naming them', async () => {
      await read(t, `/api/modules/deploys/latest?project_id=${project.id}`, 404, other.token)
      const unknown = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&colour=red`, 400)
      assert.match(unknown.detail, /colour/)
      const badLimit = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&limit=0`, 400)
      assert.match(badLimit.detail, /limit/)
      const badCursor = await read(t, `/api/modules/deploys/latest?project_id=${project.id}&cursor=nonsense`, 400)
      assert.match(badCursor.detail, /cursor/)
      const missing = await read(t, `/api/modules/deploys/latest`, 400)
      assert.match(missing.detail, /project_id/)
    })
  })
}
