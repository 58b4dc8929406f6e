import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`reported webhook attempts on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'integrations')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('webhook', { destination: 'billing', url: 'https://billing.example.com/hook', statusCode: 200, attempt: 2 }, at(10)),
        event('webhook', { destination: 'billing', url: 'https://billing.example.com/hook', statusCode: 503, attempt: 1 }, at(5)),
        event('webhook', { destination: 'billing', url: 'https://billing.example.com/hook', attempt: 1 }, at(1)),
        event('webhook', { destination: 'billing', url: 'https://billing.example.com/hook', statusCode: 204, attempt: 1 }, at(0)),
        event('webhook', { url: 'https://chat.example.com/in', statusCode: 404, attempt: 1 }, at(20)),
      ])
      await ingestAll(t, other.project, [event('webhook', { destination: 'billing', url: 'https://evil.example.com', statusCode: 500 }, at(30))])
    })
    after(() => t.close())

    test('attempts per destination with success rate, most recently attempted first', async () => {
      const body = await read(t, `/api/webhooks/reported-attempts?project_id=${project.id}`)
      assert.deepEqual(body.data, [
        { destination: 'https://chat.example.com/in', url: 'https://chat.example.com/in', attempts: 1, succeeded: 0, failed: 1, successRate: 0, lastAttemptAt: at(20), lastStatusCode: 404 },
        { destination: 'billing', url: 'https://billing.example.com/hook', attempts: 4, succeeded: 2, failed: 2, successRate: 0.5, lastAttemptAt: at(10), lastStatusCode: 200 },
      ])
    })

    test('narrows by destination and time; no match is empty', async () => {
      const early = await read(t, `/api/webhooks/reported-attempts?project_id=${project.id}&destination=billing&to=${at(2)}`)
      assert.deepEqual(early.data.map((d: any) => [d.attempts, d.succeeded, d.lastStatusCode]), [[2, 1, null]])
      const none = await read(t, `/api/webhooks/reported-attempts?project_id=${project.id}&destination=nowhere`)
      assert.deepEqual(none, { data: [] })
      const failures = await read(t, `/api/webhooks/events?project_id=${project.id}&status_code=503`)
      assert.equal(failures.data.length, 1)
    })

    test('other organisations get 404; bad parameters are named', async () => {
      await read(t, `/api/webhooks/reported-attempts?project_id=${project.id}`, 404, other.token)
      assert.match((await read(t, `/api/webhooks/reported-attempts?project_id=${project.id}&status=failed`, 400)).detail, /query\.status/)
    })
  })
}
