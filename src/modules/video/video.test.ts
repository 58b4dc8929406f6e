import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`video reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'studio')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('video', { jobId: 'job-1', status: 'done', artifactUrl: 'https://cdn.example.com/job-1.mp4' }, at(20)),
        event('video', { jobId: 'job-1', status: 'queued', targetUrl: 'https://example.com/page' }, at(0)),
        event('video', { jobId: 'job-1', status: 'recording' }, at(10)),
        // After the artifact, a later event without one: the artifact stays known.
        event('video', { jobId: 'job-1', status: 'archived' }, at(30)),
        event('video', { jobId: 'job-2', status: 'failed', targetUrl: 'https://example.com/other' }, at(25)),
        event('video', { jobId: 'job-3', status: 'queued' }, at(5)),
      ])
      await ingestAll(t, other.project, [event('video', { jobId: 'job-1', status: 'hacked' }, at(40))])
    })
    after(() => t.close())

    test('jobs with their latest status and artifact, most recently updated first', async () => {
      const body = await read(t, `/api/video/jobs?project_id=${project.id}`)
      assert.deepEqual(
        body.data.map((j: any) => [j.jobId, j.status, j.targetUrl, j.artifactUrl, j.events, j.createdAt, j.updatedAt]),
        [
          ['job-1', 'archived', 'https://example.com/page', 'https://cdn.example.com/job-1.mp4', 4, at(0), at(30)],
          ['job-2', 'failed', 'https://example.com/other', null, 1, at(25), at(25)],
          ['job-3', 'queued', null, null, 1, at(5), at(5)],
        ],
      )
    })

    test('the status filter matches a job’s latest status only', async () => {
      const queued = await read(t, `/api/video/jobs?project_id=${project.id}&status=queued`)
      assert.deepEqual(queued.data.map((j: any) => j.jobId), ['job-3'])
      const none = await read(t, `/api/video/jobs?project_id=${project.id}&status=recording`)
      assert.deepEqual(none, { data: [], nextCursor: null })
    })

    test('GET /api/video/jobs/{jobId} gives the latest status, artifact and history', async () => {
      const body = await read(t, `/api/video/jobs/job-1?project_id=${project.id}`)
      assert.equal(body.status, 'archived')
      assert.equal(body.artifactUrl, 'https://cdn.example.com/job-1.mp4')
      assert.deepEqual(body.history.data.map((e: any) => e.status), ['archived', 'done', 'recording', 'queued'])
      assert.equal(body.history.nextCursor, null)
      await read(t, `/api/video/jobs/job-9?project_id=${project.id}`, 404)
      await read(t, `/api/video/jobs/job-1?project_id=${project.id}`, 404, other.token)
    })

    test('pages of jobs end exactly at the limit; bad parameters are named', async () => {
      const first = await read(t, `/api/video/jobs?project_id=${project.id}&limit=2`)
      const second = await read(t, `/api/video/jobs?project_id=${project.id}&limit=2&cursor=${first.nextCursor}`)
      assert.deepEqual(second.data.map((j: any) => j.jobId), ['job-3'])
      assert.equal(second.nextCursor, null)
      assert.match((await read(t, `/api/video/jobs?project_id=${project.id}&job=1`, 400)).detail, /query\.job/)
      assert.match((await read(t, `/api/video/jobs?project_id=${project.id}&limit=many`, 400)).detail, /query\.limit/)
    })
  })
}
