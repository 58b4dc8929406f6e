import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, type TestPortal, type TestProject } from '../support/portal.ts'
import { captured, groupOf, listGroups, startErrorsPortal } from './support.ts'

for (const dialect of DIALECTS) {
  describe(`merging error groups on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startErrorsPortal(dialect)
    })
    after(() => t.close())

    const merge = (fingerprint: string, fingerprints: string[], token = t.adminToken) =>
      t.request('POST', `/api/errors/groups/${fingerprint}/merge`, { token, body: { fingerprints } })
    const unmerge = (fingerprint: string, fingerprints: string[]) => t.request('POST', `/api/errors/groups/${fingerprint}/unmerge`, { token: t.adminToken, body: { fingerprints } })

    async function twoGroups(project: TestProject) {
      const a = await captured(t, project, { name: 'TimeoutError', message: 'upstream timed out', environment: 'production', release: '1.0' })
      await captured(t, project, { name: 'TimeoutError', message: 'upstream timed out', environment: 'production', release: '1.0' })
      const b = await captured(t, project, { name: 'SocketError', message: 'socket hang up', environment: 'staging', release: '1.1' })
      return { a: a.fingerprint, b: b.fingerprint }
    }

    test('a merged group answers to both fingerprints, sums its counts, and later occurrences follow the merge', async () => {
      const project = await createProject(t)
      const { a, b } = await twoGroups(project)
      const merged = await merge(a, [b])
      assert.equal(merged.status, 200)
      assert.equal(merged.body.fingerprint, a)
      assert.equal(merged.body.count, 3)
      assert.deepEqual(merged.body.fingerprints, [a, b])
      assert.deepEqual(merged.body.environments.sort(), ['production', 'staging'])
      assert.deepEqual(merged.body.releases, ['1.0', '1.1'])
      const viaB = await groupOf(t, b)
      assert.equal(viaB.fingerprint, a)
      assert.equal(viaB.grouping.length, 2)
      assert.equal(viaB.occurrences.length, 3)
      assert.deepEqual((await listGroups(t, project)).data.map((g: any) => g.fingerprint), [a])

      const later = await captured(t, project, { name: 'SocketError', message: 'socket hang up' })
      assert.equal(later.fingerprint, b)
      assert.equal(later.groupFingerprint, a)
      assert.equal(later.isNewGroup, false)
      assert.equal((await groupOf(t, a)).count, 4)
    })

    test('unmerge puts a fingerprint back on its own with exactly its own counts', async () => {
      const project = await createProject(t)
      const { a, b } = await twoGroups(project)
      await merge(a, [b])
      await captured(t, project, { name: 'SocketError', message: 'socket hang up', environment: 'staging' })
      const split = await unmerge(a, [b])
      assert.equal(split.status, 200)
      assert.equal(split.body.group.fingerprint, a)
      assert.equal(split.body.group.count, 2)
      assert.deepEqual(split.body.group.environments, ['production'])
      assert.equal(split.body.unmerged[0].fingerprint, b)
      assert.equal(split.body.unmerged[0].count, 2)
      assert.equal(split.body.unmerged[0].status, 'unresolved')
      assert.equal(split.body.unmerged[0].name, 'SocketError')
      const detailB = await groupOf(t, b)
      assert.deepEqual(detailB.fingerprints, [b])
      assert.equal(detailB.occurrences.length, 2)
      assert.equal((await groupOf(t, a)).occurrences.length, 2)
      assert.equal((await listGroups(t, project)).data.length, 2)
    })

    test('unmerging the primary fingerprint leaves the group known by its oldest remaining one', async () => {
      const project = await createProject(t)
      const { a, b } = await twoGroups(project)
      await merge(a, [b])
      const split = await unmerge(a, [a])
      assert.equal(split.status, 200)
      assert.equal(split.body.group.fingerprint, b)
      assert.equal(split.body.group.count, 1)
      assert.equal(split.body.unmerged[0].fingerprint, a)
      assert.equal(split.body.unmerged[0].count, 2)
    })

    test('merge and unmerge refuse what they cannot do', async () => {
      const project = await createProject(t)
      const other = await createProject(t, 'other project')
      const { a, b } = await twoGroups(project)
      const foreign = await captured(t, other, { name: 'ForeignError', message: 'x' })
      const crossProject = await merge(a, [foreign.fingerprint])
      assert.equal(crossProject.status, 422)
      assert.match(crossProject.body.detail, /^fingerprints\.0/)
      const unknown = await merge(a, ['f'.repeat(64)])
      assert.equal(unknown.status, 404)
      assert.match(unknown.body.detail, /^fingerprints\.0/)
      assert.equal((await merge(a, [b], t.viewerToken)).status, 403)
      assert.equal((await merge(a, [])).status, 400)
      assert.equal((await merge(a, ['nope'])).status, 400)
      const notHeld = await unmerge(a, [b])
      assert.equal(notHeld.status, 422)
      const last = await unmerge(a, [a])
      assert.equal(last.status, 422)
      assert.equal((await merge(a, [a])).body.count, 2)
    })
  })
}
