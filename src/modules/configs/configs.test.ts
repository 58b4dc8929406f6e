import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`config reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'infra')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('config', { path: 'app/settings.yaml', actor: 'bob', diff: '-timeout: 5\n+timeout: 10' }, at(20)),
        event('config', { path: 'app/settings.yaml', actor: 'alice', diff: '-timeout: 3\n+timeout: 5' }, at(10)),
        event('config', { path: 'nginx.conf', actor: 'alice', diff: '+gzip on;' }, at(15)),
      ])
      await ingestAll(t, other.project, [event('config', { path: 'app/settings.yaml', actor: 'mallory' }, at(30))])
    })
    after(() => t.close())

    test('changed paths with the latest change’s actor and diff', async () => {
      const body = await read(t, `/api/modules/configs/paths?project_id=${project.id}`)
      assert.deepEqual(
        body.data.map((p: any) => [p.path, p.changes, p.lastActor, p.lastDiff, p.firstChangedAt, p.lastChangedAt]),
        [
          ['app/settings.yaml', 2, 'bob', '-timeout: 5\n+timeout: 10', at(10), at(20)],
          ['nginx.conf', 1, 'alice', '+gzip on;', at(15), at(15)],
        ],
      )
    })

    test('who changed what: the paths one actor changed, and a path’s changes with diffs', async () => {
      const alice = await read(t, `/api/modules/configs/paths?project_id=${project.id}&actor=alice`)
      assert.deepEqual(alice.data.map((p: any) => [p.path, p.changes, p.lastDiff]), [['nginx.conf', 1, '+gzip on;'], ['app/settings.yaml', 1, '-timeout: 3\n+timeout: 5']])
      const history = await read(t, `/api/modules/configs/events?project_id=${project.id}&path=app/settings.yaml`)
      assert.deepEqual(history.data.map((e: any) => e.data.actor), ['bob', 'alice'])
      const none = await read(t, `/api/modules/configs/paths?project_id=${project.id}&actor=nobody`)
      assert.deepEqual(none, { data: [], nextCursor: null })
    })

    test('other organisations get 404; bad parameters are named', async () => {
      await read(t, `/api/modules/configs/paths?project_id=${project.id}`, 404, other.token)
      assert.match((await read(t, `/api/modules/configs/paths?project_id=${project.id}&path=x`, 400)).detail, /query\.path/)
      assert.match((await read(t, `/api/modules/configs/paths?project_id=${project.id}&to=soon`, 400)).detail, /query\.to/)
    })
  })
}
