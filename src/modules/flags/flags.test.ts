import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`feature flag reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      const sibling = await createProject(t, 'sibling')
      other = await otherOrganisation(t)
      // Out of time order: the newest state of new-checkout (off, by bob) is sent first.
      await ingestAll(t, project, [
        event('feature_flag', { key: 'new-checkout', enabled: false, rollout: 0, actor: 'bob' }, at(30)),
        event('feature_flag', { key: 'new-checkout', enabled: true, rollout: 10, actor: 'alice' }, at(10)),
        event('feature_flag', { key: 'new-checkout', enabled: true, rollout: 50, actor: 'alice' }, at(20)),
        event('feature_flag', { key: 'dark-mode', enabled: true, rollout: 100 }, at(5)),
      ])
      await ingestAll(t, sibling, [event('feature_flag', { key: 'new-checkout', enabled: true, rollout: 100 }, at(40))])
      await ingestAll(t, other.project, [event('feature_flag', { key: 'new-checkout', enabled: true }, at(50))])
    })
    after(() => t.close())

    test('the current state of each flag is its latest event by time', async () => {
      const body = await read(t, `/api/flags/flags?project_id=${project.id}`)
      assert.deepEqual(
        body.data.map((f: any) => [f.key, f.enabled, f.rollout, f.actor, f.changes, f.updatedAt]),
        [
          ['new-checkout', false, 0, 'bob', 3, at(30)],
          ['dark-mode', true, 100, null, 1, at(5)],
        ],
      )
      assert.equal(body.nextCursor, null)
      const status = await read(t, `/api/flags/status?project_id=${project.id}`)
      assert.deepEqual([status.events, status.summaries], [4, { flags: 2 }])
    })

    test('one flag with its history, newest first, paged', async () => {
      const body = await read(t, `/api/flags/flags/new-checkout?project_id=${project.id}&limit=2`)
      assert.equal(body.enabled, false)
      assert.deepEqual(body.history.data.map((c: any) => [c.rollout, c.actor]), [[0, 'bob'], [50, 'alice']])
      const rest = await read(t, `/api/flags/flags/new-checkout?project_id=${project.id}&limit=2&cursor=${body.history.nextCursor}`)
      assert.deepEqual(rest.history.data.map((c: any) => c.rollout), [10])
      assert.equal(rest.history.nextCursor, null)
    })

    test('pages of flags end exactly at the limit', async () => {
      const first = await read(t, `/api/flags/flags?project_id=${project.id}&limit=1`)
      const second = await read(t, `/api/flags/flags?project_id=${project.id}&limit=1&cursor=${first.nextCursor}`)
      assert.deepEqual(second.data.map((f: any) => f.key), ['dark-mode'])
      assert.equal(second.nextCursor, null)
    })

    test('a later batch with an older change counts it without making it current; a newer one takes over', async () => {
      await ingestAll(t, project, [event('feature_flag', { key: 'dark-mode', enabled: false, rollout: 0, actor: 'carol' }, at(1))])
      const older = await read(t, `/api/flags/flags/dark-mode?project_id=${project.id}`)
      assert.deepEqual([older.enabled, older.rollout, older.changes, older.updatedAt], [true, 100, 2, at(5)])
      await ingestAll(t, project, [event('feature_flag', { key: 'dark-mode', enabled: true, rollout: 25, actor: 'carol' }, at(35))])
      const newer = await read(t, `/api/flags/flags?project_id=${project.id}`)
      assert.deepEqual(newer.data.map((f: any) => [f.key, f.rollout, f.changes]), [['dark-mode', 25, 3], ['new-checkout', 0, 3]])
    })

    test('unknown flags, other organisations and bad parameters', async () => {
      await read(t, `/api/flags/flags/no-such-flag?project_id=${project.id}`, 404)
      await read(t, `/api/flags/flags?project_id=${project.id}`, 404, other.token)
      await read(t, `/api/flags/flags/new-checkout?project_id=${other.project.id}`, 404)
      assert.match((await read(t, `/api/flags/flags?project_id=${project.id}&enabled=true`, 400)).detail, /query\.enabled/)
      assert.match((await read(t, `/api/flags/flags?project_id=${project.id}&limit=501`, 400)).detail, /query\.limit/)
      const none = await read(t, `/api/flags/events?project_id=${project.id}&actor=nobody`)
      assert.deepEqual(none, { data: [], nextCursor: null })
    })
  })
}
