import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, ingest, type TestPortal, type TestProject } from '../support/portal.ts'
import { capture, captured, groupOf, javaStack, nodeStack, pythonStack, startErrorsPortal } from './support.ts'

for (const dialect of DIALECTS) {
  describe(`error grouping on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    before(async () => {
      t = await startErrorsPortal(dialect)
      project = await createProject(t)
    })
    after(() => t.close())

    const typeError = (stack: string, extra: Record<string, unknown> = {}) => ({ name: 'TypeError', message: "Cannot read properties of undefined (reading 'id')", stack, ...extra })

    test('the same error at other line numbers joins its group', async () => {
      const first = await captured(t, project, typeError(nodeStack({ line: 42 })))
      const second = await captured(t, project, typeError(nodeStack({ line: 97 })))
      assert.equal(first.isNewGroup, true)
      assert.equal(second.isNewGroup, false)
      assert.equal(second.fingerprint, first.fingerprint)
      assert.equal((await groupOf(t, first.fingerprint)).count, 2)
    })

    test('the same error under another absolute path prefix, or through other library frames, joins its group', async () => {
      const first = await captured(t, project, typeError(nodeStack()))
      const moved = await captured(t, project, typeError(nodeStack({ prefix: 'C:\\deploy\\releases\\2026-11-21' })))
      const otherLibrary = await captured(t, project, typeError(nodeStack({ library: 'koa' })))
      assert.equal(moved.fingerprint, first.fingerprint)
      assert.equal(otherLibrary.fingerprint, first.fingerprint)
    })

    test('a different in-app call site or a different exception opens another group', async () => {
      const first = await captured(t, project, typeError(nodeStack()))
      const otherCaller = await captured(t, project, typeError(nodeStack({ caller: 'handleAdmin' })))
      const otherName = await captured(t, project, { ...typeError(nodeStack()), name: 'RangeError' })
      assert.notEqual(otherCaller.fingerprint, first.fingerprint)
      assert.notEqual(otherName.fingerprint, first.fingerprint)
      assert.notEqual(otherName.fingerprint, otherCaller.fingerprint)
    })

    test('without a stack, the same message with other ids, addresses and times joins its group', async () => {
      const message = (id: string, ip: string, when: string, user: string) => `query ${id} by ${user} to ${ip} failed at ${when} after 1500ms (attempt 3)`
      const first = await captured(t, project, { name: 'DbError', message: message('3f2b8c1e-9d4a-4f6b-8e2a-1c3d5e7f9a0b', '10.0.0.1:5432', '2026-11-21T10:00:00Z', 'ann@example.com') })
      const second = await captured(t, project, { name: 'DbError', message: message('0b1e7c2a-1111-4f6b-8e2a-9c3d5e7f9a0b', '10.9.8.7:6432', '2026-11-22T23:59:59.999Z', 'bob@example.org') })
      const other = await captured(t, project, { name: 'DbError', message: 'connection refused' })
      assert.equal(second.fingerprint, first.fingerprint)
      assert.notEqual(other.fingerprint, first.fingerprint)
    })

    test('Python tracebacks and JVM stacks group by their in-app frames, not their lines', async () => {
      const python = await captured(t, project, { name: 'User.DoesNotExist', message: 'no user 7', stack: pythonStack(42) })
      const pythonMoved = await captured(t, project, { name: 'User.DoesNotExist', message: 'no user 8', stack: pythonStack(58, '/opt/other') })
      const java = await captured(t, project, { name: 'java.lang.IllegalStateException', message: 'pool exhausted', stack: javaStack(42) })
      const javaMoved = await captured(t, project, { name: 'java.lang.IllegalStateException', message: 'pool exhausted', stack: javaStack(90) })
      assert.equal(pythonMoved.fingerprint, python.fingerprint)
      assert.equal(javaMoved.fingerprint, java.fingerprint)
      const detail = await groupOf(t, java.fingerprint)
      const stacktrace = detail.grouping[0].components.find((c: any) => c.id === 'stacktrace')
      assert.deepEqual(stacktrace.values, ['com.acme.users.UserService load', 'com.acme.Main main'])
    })

    test('structured frames count when in-app, inApp: false leaves a frame out, and an empty list defers to the stack', async () => {
      const frames = (vendor: string) => [
        { function: 'get_user', module: 'app.users', lineno: 3 },
        { function: 'dispatch', module: vendor, lineno: 9, inApp: false },
      ]
      const first = await captured(t, project, { name: 'KeyError', message: 'a', frames: frames('router_a') })
      const second = await captured(t, project, { name: 'KeyError', message: 'b', frames: frames('router_b') })
      assert.equal(second.fingerprint, first.fingerprint)
      const fromStack = await captured(t, project, typeError(nodeStack()))
      const emptyFrames = await captured(t, project, typeError(nodeStack(), { frames: [] }))
      assert.equal(emptyFrames.fingerprint, fromStack.fingerprint)
    })

    test('a fingerprint override groups by the array, with {{ default }} standing for the computed one', async () => {
      const a = await captured(t, project, { ...typeError(nodeStack()), fingerprint: ['checkout', 'declined'] })
      const b = await captured(t, project, { name: 'Other', message: 'x', fingerprint: ['checkout', 'declined'] })
      assert.equal(b.fingerprint, a.fingerprint)
      const tenantA = await captured(t, project, { ...typeError(nodeStack()), fingerprint: ['{{ default }}', 'tenant-a'] })
      const tenantB = await captured(t, project, { ...typeError(nodeStack()), fingerprint: ['{{ default }}', 'tenant-b'] })
      const plain = await captured(t, project, typeError(nodeStack()))
      assert.notEqual(tenantA.fingerprint, tenantB.fingerprint)
      assert.notEqual(tenantA.fingerprint, plain.fingerprint)
      const onlyDefault = await captured(t, project, { ...typeError(nodeStack()), fingerprint: ['{{ default }}'] })
      assert.equal(onlyDefault.fingerprint, plain.fingerprint)
    })

    test('an ingested error event joins the group of a capture of the same error without a stack', async () => {
      const capturedOne = await captured(t, project, { name: 'PaymentError', message: 'card 4242 declined', environment: 'production' })
      const batch = await ingest(t, project, [event('error', { name: 'PaymentError', message: 'card 1881 declined', environment: 'staging', orderId: 'o-1' })])
      assert.deepEqual(batch.body, { accepted: 1, rejected: [] })
      const detail = await groupOf(t, capturedOne.fingerprint)
      assert.equal(detail.count, 2)
      assert.deepEqual(detail.environments.sort(), ['production', 'staging'])
      assert.deepEqual(detail.occurrences[0].metadata, { orderId: 'o-1' })
    })

    test('the group detail shows the hashed components, and the occurrence keeps unknown fields and hides credentials', async () => {
      const body = {
        ...typeError(nodeStack({ caller: 'showsComponents' })),
        release: '1.4.2',
        environment: 'production',
        service: 'api',
        request: { method: 'GET', url: 'https://shop.example.com/users/7', headers: { Authorization: 'Bearer secret-token', Cookie: 'sid=1', 'User-Agent': 'curl' } },
        userId: 'u-7',
        tags: { region: 'eu' },
      }
      const result = await captured(t, project, body)
      const detail = await groupOf(t, result.fingerprint)
      const components = detail.grouping[0].components
      assert.deepEqual(components.map((c: any) => [c.id, c.contributes]), [['exception', true], ['stacktrace', true], ['value', false]])
      assert.deepEqual(components[1].values, ['users.ts loadUser', 'routes.ts showsComponents'])
      assert.equal(detail.grouping[0].algorithm, 'v3')
      assert.equal(detail.groupingAlgorithm, 'v3')
      const occurrence = detail.occurrences[0]
      assert.deepEqual(occurrence.metadata, { userId: 'u-7', tags: { region: 'eu' } })
      assert.equal(occurrence.request.headers.Authorization, '[filtered]')
      assert.equal(occurrence.request.headers.Cookie, '[filtered]')
      assert.equal(occurrence.request.headers['User-Agent'], 'curl')
      assert.equal(occurrence.frames[0].function, 'loadUser')
      assert.equal(occurrence.frames[0].lineno, 42)
      assert.equal(occurrence.frames[2].inApp, false)
      assert.equal(occurrence.stack, body.stack)
      assert.ok(!JSON.stringify(detail).includes('secret-token'))
    })

    test('bad capture bodies get a 400 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ message: 'no name' }, 'body.name'],
        [{ name: 'E' }, 'body.message'],
        [{ name: 'E', message: 'm', frames: 'not frames' }, 'body.frames'],
        [{ name: 'E', message: 'm', frames: [{ lineno: 'seven' }] }, 'body.frames.0.lineno'],
        [{ name: 'E', message: 'm', fingerprint: [] }, 'body.fingerprint'],
        [{ name: 'E', message: 'm', timestamp: 'yesterday' }, 'body.timestamp'],
        [{ name: 'E', message: 'm', environment: '' }, 'body.environment'],
        [{ name: 'E', message: 'm', request: 'GET /' }, 'body.request'],
      ]
      for (const [body, field] of cases) {
        const response = await capture(t, project, body)
        assert.equal(response.status, 400, JSON.stringify(body))
        assert.ok(response.body.detail.startsWith(field), `${response.body.detail} names ${field}`)
      }
      const notJson = await t.request('POST', '/api/errors/capture', { token: project.key, body: '{"name":', headers: { 'content-type': 'application/json' } })
      assert.equal(notJson.status, 400)
    })

    test('a body nested too deeply is refused with a 400, and U+0000 in text is stored as U+FFFD', async () => {
      let deep: unknown = 'bottom'
      for (let i = 0; i < 40; i++) deep = { deeper: deep }
      const tooDeep = await capture(t, project, { name: 'E', message: 'm', context: deep })
      assert.equal(tooDeep.status, 400)
      assert.match(tooDeep.body.detail, /^body: is nested more than/)
      const withNul = await captured(t, project, { name: 'NulError', message: 'bad\u0000byte', extra: { 'k\u0000': 'v\u0000' } })
      const occurrence = (await groupOf(t, withNul.fingerprint)).occurrences[0]
      assert.equal(occurrence.message, 'bad\uFFFDbyte')
      assert.deepEqual(occurrence.metadata, { extra: { 'k\uFFFD': 'v\uFFFD' } })
    })

    test('one ingest batch of thousands of distinct errors is grouped in full', async () => {
      const own = await createProject(t, 'bulk')
      const total = 6000
      const batch = await ingest(t, own, Array.from({ length: total }, (_, i) => event('error', { name: `Bulk${i}Error`, message: 'x' })))
      assert.equal(batch.body.accepted, total)
      const status = await t.request('GET', `/api/errors/status?project_id=${own.id}`, { token: t.viewerToken })
      assert.equal(status.body.groups, total)
    })

    test('capture takes an API key without a signature, and refuses access tokens; group reads refuse API keys', async () => {
      assert.equal((await capture(t, project, { name: 'E', message: 'unsigned' })).status, 201)
      const withToken = await t.request('POST', '/api/errors/capture', { token: t.adminToken, body: { name: 'E', message: 'm' } })
      assert.equal(withToken.status, 403)
      assert.equal((await t.request('POST', '/api/errors/capture', { body: { name: 'E', message: 'm' } })).status, 401)
      const read = await t.request('GET', `/api/errors/groups?project_id=${project.id}`, { token: project.key })
      assert.equal(read.status, 403)
    })
  })
}
