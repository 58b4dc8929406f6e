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

    test('counts over a window of hours match its events, whole hours and the partial ones at its ends', async () => {
      const hours = await createProject(t, 'hours')
      const pushes: [string, string, number][] = [['main', 'alice', 5], ['main', 'bob', 50], ['main', 'alice', 65], ['dev', 'bob', 70], ['main', 'bob', 130], ['dev', 'alice', 185], ['main', 'alice', 200], ['main', 'alice', 250]]
      await ingestAll(t, hours, pushes.map(([branch, author, minute]) => event('repository', { repo: 'acme/api', branch, author, commit: `c${minute}` }, at(minute))))
      const branches = async (window: string, page = '') => {
        const body = await read(t, `/api/modules/repository/branches?project_id=${hours.id}${window}${page}`)
        return { rows: body.data.map((b: any) => [b.branch, b.commits, b.lastCommit, b.lastPushedAt]), nextCursor: body.nextCursor }
      }
      assert.deepEqual((await branches(`&from=${at(30)}&to=${at(190)}`)).rows, [['dev', 2, 'c185', at(185)], ['main', 3, 'c130', at(130)]])
      assert.deepEqual((await branches(`&from=${at(60)}`)).rows, [['main', 4, 'c250', at(250)], ['dev', 2, 'c185', at(185)]])
      assert.deepEqual((await branches(`&to=${at(120)}`)).rows, [['dev', 1, 'c70', at(70)], ['main', 3, 'c65', at(65)]])
      const first = await branches(`&from=${at(0)}&to=${at(300)}`, '&limit=1')
      assert.deepEqual(first.rows, [['main', 6, 'c250', at(250)]])
      assert.deepEqual((await branches(`&from=${at(0)}&to=${at(300)}`, `&limit=1&cursor=${first.nextCursor}`)).rows, [['dev', 2, 'c185', at(185)]])
      const authors = await read(t, `/api/modules/repository/authors?project_id=${hours.id}&from=${at(30)}&to=${at(190)}`)
      assert.deepEqual(authors.data.map((a: any) => [a.author, a.commits, a.firstCommitAt, a.lastCommitAt]), [['alice', 2, at(65), at(185)], ['bob', 3, at(50), at(130)]])
    })

    test('other organisations get 404; bad parameters are named', async () => {
      await read(t, `/api/modules/repository/authors?project_id=${project.id}`, 404, other.token)
      assert.match((await read(t, `/api/modules/repository/branches?project_id=${project.id}&author=bob`, 400)).detail, /query\.author/)
    })
  })
}
