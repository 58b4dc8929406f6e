import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { computeGroupingV1 } from '../../src/errors/fingerprint-v1.ts'
import { parseStackTrace } from '../../src/errors/stack-trace.ts'
import { errorDb } from '../../src/errors/tables.ts'
import { createProject, DIALECTS, type TestPortal, type TestProject } from '../support/portal.ts'
import { captured, groupOf, nodeStack, startErrorsPortal, watchAnnouncements } from './support.ts'

/**
 * A group opened by grouping v1 before the upgrade, as errors/002 to 005 stored it (the group row
 * without the algorithm column errors/006 added): its v1 fingerprint, resolved.
 */
async function resolvedV1Group(t: TestPortal, project: TestProject, body: { name: string; message: string; stack: string }): Promise<string> {
  const v1 = computeGroupingV1(project.id, { name: body.name, message: body.message, frames: parseStackTrace(body.stack) })
  const db = errorDb(t.portal.ctx.storage.db)
  const at = Date.now() - 86_400_000
  await db
    .insertInto('error_groups')
    .values({ id: `grp_v1_${project.id}`, project_id: project.id, fingerprint: v1.fingerprint, name: body.name, message: body.message, status: 'resolved', regressed: 0, count: 3, first_seen: at, last_seen: at, status_changed_at: at, created_at: at } as never)
    .execute()
  await db.insertInto('error_fingerprint_days').values({ fingerprint: v1.fingerprint, day: Math.floor(at / 86_400_000), group_id: `grp_v1_${project.id}`, count: 3, first_seen: at, last_seen: at }).execute()
  await db.insertInto('error_fingerprints').values({ fingerprint: v1.fingerprint, project_id: project.id, group_id: `grp_v1_${project.id}`, algorithm: 'v1', components: JSON.stringify(v1.components) }).execute()
  return v1.fingerprint
}

for (const dialect of DIALECTS) {
  describe(`grouping algorithm upgrade on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startErrorsPortal(dialect)
    })
    after(() => t.close())

    test('a group opened by v1 records v1, and the same error under v2 joins it: its regression reopens it rather than opening a new group', async () => {
      const project = await createProject(t)
      const body = { name: 'TypeError', message: "Cannot read properties of undefined (reading 'id')", stack: nodeStack({ caller: 'upgraded' }) }
      const v1Fingerprint = await resolvedV1Group(t, project, body)
      assert.equal((await groupOf(t, v1Fingerprint)).groupingAlgorithm, 'v1', 'rows from before errors/006 read as v1')
      const announcements = await watchAnnouncements(t, project)

      const first = await captured(t, project, body)
      assert.notEqual(first.fingerprint, v1Fingerprint, 'v2 computes another fingerprint')
      assert.equal(first.groupFingerprint, v1Fingerprint, 'it joins the v1 group')
      assert.equal(first.isNewGroup, false)
      const group = await groupOf(t, v1Fingerprint)
      assert.equal(group.status, 'unresolved')
      assert.equal(group.regressed, true)
      assert.equal(group.count, 4)
      assert.equal(group.groupingAlgorithm, 'v1', 'the group keeps the version that opened it')
      assert.deepEqual(group.grouping.map((entry: any) => entry.algorithm).sort(), ['v1', 'v2'], 'the group holds both fingerprints, each with its algorithm')
      const types = (await announcements()).map((announcement) => announcement.type)
      assert.ok(types.includes('error.group.regressed'))
      assert.ok(!types.includes('error.group.created'), 'no new group is opened, silently or not')

      const again = await captured(t, project, body)
      assert.equal(again.fingerprint, first.fingerprint)
      assert.equal(again.groupFingerprint, v1Fingerprint, 'later occurrences find the group by their v2 fingerprint')

      const other = await captured(t, project, { ...body, stack: nodeStack({ caller: 'elsewhere' }) })
      assert.equal(other.isNewGroup, true, 'an error v1 never saw opens a v2 group')
      assert.equal((await groupOf(t, other.fingerprint)).groupingAlgorithm, 'v2')
    })
  })
}
