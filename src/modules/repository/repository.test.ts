import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`repository reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'code')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('repository', { provider: 'github', repo: 'acme/api', branch: 'main', commit: 'c3', author: 'alice' }, at(30)),
        event('repository', { provider: 'github', repo: 'acme/api', branch: 'main', commit: 'c1', author: 'bob' }, at(10)),
        event('repository', { provider: 'github', repo: 'acme/api', branch: 'feature', commit: 'f1', author: 'bob' }, at(20)),
        event('repository', { provider: 'gitlab', repo: 'acme/web', commit: 'w1' }, at(5)),
      ])
      await ingestAll(t, other.project, [event('repository', { repo: 'acme/api', branch: 'main', author: 'mallory' }, at(40))])
    })
    after(() => t.close())

    test('commits per repository and branch with the latest commit', async () => {
      const body = await read(t, `/api/modules/repository/branches?project_id=${project.id}`)
      assert.deepEqual(
        body.data.map((b: any) => [b.repo, b.branch, b.commits, b.lastCommit, b.lastAuthor, b.provider]),
        [
          ['acme/api', 'main', 2, 'c3', 'alice', 'github'],
          ['acme/api', 'feature', 1, 'f1', 'bob', 'github'],
          ['acme/web', null, 1, 'w1', null, 'gitlab'],
        ],
      )
      const web = await read(t, `/api/modules/repository/branches?project_id=${project.id}&repo=acme/web`)
      assert.equal(web.data.length, 1)
    })

    test('authors with their commit counts, most recently active first', async () => {
      const body = await read(t, `/api/modules/repository/authors?project_id=${project.id}`)
      assert.deepEqual(body.data.map((a: any) => [a.author, a.commits, a.lastRepo, a.lastCommit]), [['alice', 1, 'acme/api', 'c3'], ['bob', 2, 'acme/api', 'f1']])
      const window = await read(t, `/api/modules/repository/authors?project_id=${project.id}&to=${at(15)}`)
      assert.deepEqual(window.data.map((a: any) => [a.author, a.commits]), [['bob', 1]])
      const none = await read(t, `/api/modules/repository/authors?project_id=${project.id}&repo=acme/none`)
      assert.deepEqual(none, { data: [], nextCursor: null })
    })

    test('other organisations get 404; bad parameters are named', async () => {
      await read(t, `/api/modules/repository/authors?project_id=${project.id}`, 404, other.token)
      assert.match((await read(t, `/api/modules/repository/branches?project_id=${project.id}&author=bob`, 400)).detail, /query\.author/)
    })
  })
}
