import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, ingest, startTestPortal, type TestPortal } from './support/portal.ts'

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString()

for (const dialect of DIALECTS) {
  describe(`project activity on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(() => t?.close())

    test('counts the last 24 h and names the latest event, in total and by type; a new project has only the portal’s own audit events', async () => {
      const busy = await createProject(t, 'busy')
      const empty = await createProject(t, 'empty')
      const answer = await ingest(t, busy, [
        event('log', { level: 'info', message: 'now' }, hoursAgo(1)),
        event('log', { level: 'info', message: 'yesterday' }, hoursAgo(30)),
        event('deploy', { service: 'api', version: '1', environment: 'production', status: 'succeeded' }, hoursAgo(2)),
      ])
      assert.equal(answer.status, 200, answer.text)
      const capture = await t.request('POST', '/api/errors/capture', { token: busy.key, body: { name: 'Error', message: 'boom' } })
      assert.equal(capture.status, 201, capture.text)

      const res = await t.request('GET', `/api/projects/activity?project_id=${busy.id}&project_id=${empty.id}`, { token: t.viewerToken })
      assert.equal(res.status, 200, res.text)
      const byId = new Map(res.body.data.map((row: any) => [row.projectId, row]))
      assert.equal(byId.size, 2)
      // the portal records its own management actions (project and key created) in the audit module
      const quiet = byId.get(empty.id) as any
      assert.deepEqual(Object.keys(quiet.types), ['audit'])
      assert.equal(quiet.eventsLast24h, quiet.types.audit.eventsLast24h)
      const activity = byId.get(busy.id) as any
      assert.equal(activity.eventsLast24h - activity.types.audit.eventsLast24h, 3)
      assert.deepEqual(Object.keys(activity.types).sort(), ['audit', 'deploy', 'error', 'log'])
      assert.equal(activity.types.log.eventsLast24h, 1)
      assert.equal(activity.types.error.eventsLast24h, 1)
      assert.equal(activity.lastEventAt, [activity.types.error.lastEventAt, activity.types.audit.lastEventAt].sort().at(-1))
      assert.ok(Date.parse(activity.types.log.lastEventAt) > Date.now() - 2 * 3_600_000)
    })

    test('asks for at least one project, each of the organisation', async () => {
      const mine = await createProject(t, 'mine')
      const unknown = await t.request('GET', `/api/projects/activity?project_id=${mine.id}&project_id=prj_not_ours`, { token: t.viewerToken })
      assert.equal(unknown.status, 404)
      assert.match(unknown.body.detail, /prj_not_ours/)
      const res = await t.request('GET', '/api/projects/activity', { token: t.viewerToken })
      assert.equal(res.status, 400)
      assert.match(res.body.detail, /project_id/)
    })
  })
}
