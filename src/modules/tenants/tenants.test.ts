import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`tenant reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let sibling: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'platform')
      sibling = await createProject(t, 'customer')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        // The sending project, named and unnamed, is one tenant.
        event('tenant', { plan: 'team', ingestLimitPerSecond: 200 }, at(10)),
        event('tenant', { projectId: project.id, plan: 'free', ingestLimitPerSecond: 50 }, at(0)),
        event('tenant', { plan: 'enterprise' }, at(20)),
        event('tenant', { projectId: sibling.id, plan: 'free' }, at(5)),
        // over 32 bits: the limit's column is as wide as the projects' own
        event('tenant', { projectId: sibling.id, plan: 'free', ingestLimitPerSecond: 5_000_000_000 }, at(4)),
      ])
      await ingestAll(t, other.project, [event('tenant', { plan: 'secret' }, at(30))])
    })
    after(() => t.close())

    test('each tenant’s current plan and the latest limit any event gave, with history', async () => {
      const body = await read(t, `/api/tenants/plans?project_id=${project.id}`)
      assert.deepEqual(
        body.data.map((p: any) => [p.projectId, p.plan, p.ingestLimitPerSecond, p.changes]),
        [
          [project.id, 'enterprise', 200, 3],
          [sibling.id, 'free', 5_000_000_000, 2],
        ],
      )
      const detail = await read(t, `/api/tenants/plans/${project.id}?project_id=${project.id}`)
      assert.deepEqual(detail.history.data.map((c: any) => [c.plan, c.ingestLimitPerSecond]), [['enterprise', null], ['team', 200], ['free', 50]])
      const events = await read(t, `/api/tenants/events?project_id=${project.id}&tenant=${sibling.id}`)
      assert.deepEqual(events.data.map((e: any) => e.data.plan), ['free', 'free'])
    })

    test('tenants.limit_used is the project’s events of every type over the window, as a percentage of its plan’s limit', async () => {
      const limited = await createProject(t, 'limited')
      await ingestAll(t, limited, [event('tenant', { plan: 'team', ingestLimitPerSecond: 100 })])
      const rule = { name: 'near the limit', signal: 'tenants.limit_used', windowSeconds: 86_400, intervalSeconds: 3600, condition: { op: 'above', critical: 90 }, targets: { endpointIds: [] } }
      const eventsCounted = async () => {
        const preview = await t.request('POST', '/api/alerts/preview', { token: t.adminToken, body: { projectId: limited.id, rule, range: '24h' } })
        assert.equal(preview.status, 200, preview.text)
        // the latest value is 100 × events / (100 a second × 86,400 s)
        return Math.round(preview.body.series[0].points.at(-1).value * 86_400)
      }
      const before = await eventsCounted()
      await ingestAll(t, limited, [event('tenant', { plan: 'team' }), event('log', { message: 'one', level: 'info' }), event('log', { message: 'two', level: 'info' })])
      assert.equal((await eventsCounted()) - before, 3)
    })

    test('other organisations and unknown tenants get 404; bad parameters are named', async () => {
      await read(t, `/api/tenants/plans?project_id=${project.id}`, 404, other.token)
      await read(t, `/api/tenants/plans/prj_nothing?project_id=${project.id}`, 404)
      assert.match((await read(t, `/api/tenants/plans?project_id=${project.id}&plan=free`, 400)).detail, /query\.plan/)
      const page = await read(t, `/api/tenants/plans?project_id=${project.id}&limit=2`)
      assert.equal(page.nextCursor, null)
    })
  })
}
