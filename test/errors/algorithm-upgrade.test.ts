import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { computeGroupingV2 } from '../../src/errors/fingerprint.ts'
import { computeGroupingV1 } from '../../src/errors/fingerprint-v1.ts'
import { parseStackTrace } from '../../src/errors/stack-trace.ts'
import { errorDb } from '../../src/errors/tables.ts'
import { createProject, DIALECTS, type TestPortal, type TestProject } from '../support/portal.ts'
import { captured, groupOf, nodeStack, startErrorsPortal, watchAnnouncements } from './support.ts'

type Body = { name: string; message: string; stack: string }

/**
 * A resolved group opened by an earlier grouping algorithm, as it stored it: v1's as errors/002 to 005
 * stored it (the group row without the algorithm column errors/006 added), v2's with its algorithm.
 */
async function resolvedGroupOf(t: TestPortal, project: TestProject, body: Body, algorithm: 'v1' | 'v2'): Promise<string> {
  const input = { name: body.name, message: body.message, frames: parseStackTrace(body.stack) }
  const grouping = algorithm === 'v1' ? computeGroupingV1(project.id, input) : computeGroupingV2(project.id, input)
  const db = errorDb(t.portal.ctx.storage.db)
  const at = Date.now() - 86_400_000
  const id = `grp_${algorithm}_${project.id}`
  const group = { id, project_id: project.id, fingerprint: grouping.fingerprint, name: body.name, message: body.message, status: 'resolved', regressed: 0, count: 3, first_seen: at, last_seen: at, status_changed_at: at, created_at: at }
  await db
    .insertInto('error_groups')
    .values((algorithm === 'v1' ? group : { ...group, algorithm }) as never)
    .execute()
  await db.insertInto('error_fingerprint_days').values({ fingerprint: grouping.fingerprint, day: Math.floor(at / 86_400_000), group_id: id, count: 3, first_seen: at, last_seen: at }).execute()
  await db.insertInto('error_fingerprints').values({ fingerprint: grouping.fingerprint, project_id: project.id, group_id: id, algorithm, components: JSON.stringify(grouping.components) }).execute()
  return grouping.fingerprint
}

for (const dialect of DIALECTS) {
  describe(`grouping algorithm upgrade on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startErrorsPortal(dialect)
    })
    after(() => t.close())

    for (const earlier of ['v1', 'v2'] as const) {
      test(`a group opened by ${earlier} keeps it, and the same error under v3 joins it: its regression reopens it rather than opening a new group`, async () => {
        const project = await createProject(t)
        const body = { name: 'TypeError', message: "Cannot read properties of undefined (reading 'id')", stack: nodeStack({ caller: `upgraded_${earlier}` }) }
        const earlierFingerprint = await resolvedGroupOf(t, project, body, earlier)
        assert.equal((await groupOf(t, earlierFingerprint)).groupingAlgorithm, earlier, earlier === 'v1' ? 'rows from before errors/006 read as v1' : 'the group records v2')
        const announcements = await watchAnnouncements(t, project)

        const first = await captured(t, project, body)
        assert.notEqual(first.fingerprint, earlierFingerprint, 'v3 computes another fingerprint')
        assert.equal(first.groupFingerprint, earlierFingerprint, `it joins the ${earlier} group`)
        assert.equal(first.isNewGroup, false)
        const group = await groupOf(t, earlierFingerprint)
        assert.equal(group.status, 'unresolved')
        assert.equal(group.regressed, true)
        assert.equal(group.count, 4)
        assert.equal(group.groupingAlgorithm, earlier, 'the group keeps the version that opened it')
        assert.deepEqual(group.grouping.map((entry: any) => entry.algorithm).sort(), [earlier, 'v3'], 'the group holds both fingerprints, each with its algorithm')
        const types = (await announcements()).map((announcement) => announcement.type)
        assert.ok(types.includes('error.group.regressed'))
        assert.ok(!types.includes('error.group.created'), 'no new group is opened, silently or not')

        const again = await captured(t, project, body)
        assert.equal(again.fingerprint, first.fingerprint)
        assert.equal(again.groupFingerprint, earlierFingerprint, 'later occurrences find the group by their v3 fingerprint')

        const other = await captured(t, project, { ...body, stack: nodeStack({ caller: `elsewhere_${earlier}` }) })
        assert.equal(other.isNewGroup, true, `an error ${earlier} never saw opens a v3 group`)
        assert.equal((await groupOf(t, other.fingerprint)).groupingAlgorithm, 'v3')
      })
    }

    test('an error that v1 and v2 grouped apart joins the group v2 opened, the newer of the two', async () => {
      const project = await createProject(t)
      const body = { name: 'TypeError', message: "Cannot read properties of undefined (reading 'id')", stack: nodeStack({ caller: 'both' }) }
      const v1 = await resolvedGroupOf(t, project, body, 'v1')
      const v2 = await resolvedGroupOf(t, project, body, 'v2')
      const first = await captured(t, project, body)
      assert.equal(first.groupFingerprint, v2)
      assert.equal((await groupOf(t, v1)).count, 3, 'the v1 group is left as it was')
    })
  })
}
