import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { modules } from '../src/modules/registry.ts'
import { createProject, DIALECTS, event, ingest, startTestPortal, type TestPortal, type TestProject } from './support/portal.ts'

// Concurrent ingests (a portal's several group commits on PostgreSQL, or several portals) update the same
// summary rows. Batches holding the same modules in opposite orders must not lock those rows in opposite
// orders: PostgreSQL would break the deadlock by ending one of them, which the group commit then runs again.
const METRICS_TOKEN = 'metrics-token-0123456789abcdef'

/** portal_commit_conflicts_total of the ingest path, summed over this process's portals (the registry is shared). */
async function ingestConflicts(t: TestPortal): Promise<number> {
  const response = await t.request('GET', '/metrics', { token: METRICS_TOKEN })
  assert.equal(response.status, 200, response.text)
  const line = response.text.split('\n').find((l) => l.startsWith('portal_commit_conflicts_total{committer="ingest"}'))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}
for (const dialect of DIALECTS) {
  describe(`concurrent ingest of many modules on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    before(async () => {
      t = await startTestPortal(dialect, { METRICS_TOKEN, INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '100000', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000' })
      project = await createProject(t, 'concurrent')
    })
    after(() => t?.close())

    test('batches of the same modules in opposite orders commit without a deadlock, and every event is stored once', async () => {
      const summarised = modules.filter((module) => module.summaries)
      assert.ok(summarised.length >= 2, 'needs two modules that keep summaries')
      const forward = summarised.map((module) => event(module.type, module.examples.valid as Record<string, unknown>))
      const backward = [...forward].reverse()
      // The portal writes audit events of its own (the project and key made above).
      const storedEvents = async (module: (typeof summarised)[number]) => {
        const status = await t.request('GET', `${module.basePath}/status?project_id=${project.id}`, { token: t.viewerToken })
        assert.equal(status.status, 200, `${module.type}: ${status.text}`)
        return status.body.events as number
      }
      const countsBefore = await Promise.all(summarised.map(storedEvents))
      const conflictsBefore = await ingestConflicts(t)
      const ROUNDS = 8
      const CONCURRENT = 16
      for (let round = 0; round < ROUNDS; round++) {
        const answers = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => ingest(t, project, i % 2 ? forward : backward)))
        assert.deepEqual(answers.filter((answer) => answer.status !== 200).map((answer) => `${answer.status} ${answer.text}`), [])
      }
      assert.equal(await ingestConflicts(t), conflictsBefore, 'no transaction ended by a deadlock')
      const countsAfter = await Promise.all(summarised.map(storedEvents))
      assert.deepEqual(countsAfter.map((count, index) => count - countsBefore[index]), summarised.map(() => ROUNDS * CONCURRENT))
    })
  })
}
