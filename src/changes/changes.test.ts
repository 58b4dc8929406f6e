import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`changes in a window on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    const window = `from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(60))}`
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('deploy', { service: 'checkout', version: '2.5.0', release: 'checkout@2.5.0', environment: 'production', status: 'succeeded', commit: 'c0ffee1234' }, at(40)),
        event('deploy', { service: 'search', version: '1.1.0', environment: 'staging' }, at(35)),
        event('config', { path: 'config/pricing.yaml', actor: 'bob', diff: '-a\n+b' }, at(20)),
        event('feature_flag', { key: 'new-pricing', enabled: true, rollout: 100, actor: 'ana' }, at(30)),
        event('deploy', { service: 'checkout', version: '2.4.0', environment: 'production' }, at(-30)),
        event('log', { message: 'not a change' }, at(25)),
      ])
      await ingestAll(t, other.project, [event('deploy', { service: 'checkout', version: '9.9.9' }, at(45))])
    })
    after(() => t.close())

    test('deploys, configuration and flag changes of the window, newest first, each naming its event', async () => {
      const body = await read(t, `/api/changes?project_id=${project.id}&${window}`)
      assert.deepEqual(
        body.data.map((c: any) => [c.kind, c.eventType, c.ts, c.title, c.subject, c.service, c.environment, c.actor, c.commit]),
        [
          ['deploy', 'deploy', at(40), 'checkout 2.5.0 deployed to production (succeeded)', 'checkout@2.5.0', 'checkout', 'production', null, 'c0ffee1234'],
          ['deploy', 'deploy', at(35), 'search 1.1.0 deployed to staging', '1.1.0', 'search', 'staging', null, null],
          ['flag', 'feature_flag', at(30), 'flag new-pricing → on at 100 % by ana', 'new-pricing', null, null, 'ana', null],
          ['config', 'config', at(20), 'config/pricing.yaml changed by bob', 'config/pricing.yaml', null, null, 'bob', null],
        ],
      )
      assert.equal(body.truncated, false)
      const deploys = await read(t, `/api/modules/deploys/events?project_id=${project.id}&${window}`)
      assert.equal(body.data[0].eventId, deploys.data[0].id)
    })

    test('a service or environment leaves out changes of others and keeps those that name none', async () => {
      const body = await read(t, `/api/changes?project_id=${project.id}&${window}&service=checkout&environment=production`)
      assert.deepEqual(body.data.map((c: any) => c.subject), ['checkout@2.5.0', 'new-pricing', 'config/pricing.yaml'])
    })

    test('a limit keeps the newest and says the rest were left out', async () => {
      const body = await read(t, `/api/changes?project_id=${project.id}&${window}&limit=2`)
      assert.deepEqual([body.data.map((c: any) => c.ts), body.truncated], [[at(40), at(35)], true])
    })

    test('another organisation’s project is a 404 and its changes never show', async () => {
      await read(t, `/api/changes?project_id=${other.project.id}&${window}`, 404)
      const mine = await read(t, `/api/changes?project_id=${other.project.id}&${window}`, 200, other.token)
      assert.deepEqual(mine.data.map((c: any) => c.subject), ['9.9.9'])
    })
  })
}
