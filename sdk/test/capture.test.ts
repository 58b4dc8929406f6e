import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createProject, DIALECTS } from '../../test/support/portal.ts'
import { startFaultProxy } from './support/fault-proxy.ts'
import { proxiedClient, proxiedPortal } from './support/portals.ts'
import { storedEvents } from './support/stored-events.ts'

const CRASHING_APP = fileURLToPath(new URL('./fixtures/crashing-app.ts', import.meta.url))
const dialect = DIALECTS[0]

// These captures are answered by the test's own loopback receiver (the fault proxy), which records the
// exact bodies and can refuse on cue; the last suite below captures into the real errors module.
describe(`SDK captureException and process hooks (portal on ${dialect})`, () => {
  const setup = proxiedPortal(dialect)
  const clientFor = () =>
    proxiedClient(setup, { release: 'api@2.0.0', environment: 'production', service: 'api', retry: { minDelayMs: 20, maxDelayMs: 100 } })

  test('an exception is posted with the API key, unsigned, with its stack, the client defaults and the context', async () => {
    const { project, client } = await clientFor()
    const error = new TypeError('cannot read properties of undefined')
    const result = await client.captureException(error, {
      environment: 'staging',
      request: { method: 'GET', url: '/orders/7' },
      fingerprint: ['orders', 'undefined'],
      timestamp: new Date('2026-05-01T08:00:00.000Z'),
      tenant: 'acme',
    })

    const capture = setup.proxy.captures.at(-1)!
    assert.equal(capture.headers.authorization, `Bearer ${project.key}`)
    assert.equal(capture.headers['x-service-signature'], undefined)
    assert.deepEqual(capture.body, {
      name: 'TypeError',
      message: 'cannot read properties of undefined',
      stack: error.stack,
      release: 'api@2.0.0',
      environment: 'staging',
      service: 'api',
      request: { method: 'GET', url: '/orders/7' },
      fingerprint: ['orders', 'undefined'],
      timestamp: '2026-05-01T08:00:00.000Z',
      tenant: 'acme',
    })
    assert.deepEqual(result, { id: `occ_${setup.proxy.captures.length}`, fingerprint: result?.fingerprint, isNewGroup: true })
    assert.equal((await client.captureException(error))?.isNewGroup, false)
  })

  test('a thrown value that is not an Error is captured by its value', async () => {
    const { client } = await clientFor()
    await client.captureException({ code: 'E_LIMIT', retry: false })
    await client.captureException('plain text')
    const [object, text] = setup.proxy.captures.slice(-2).map((capture) => capture.body)
    assert.deepEqual([object.name, object.message, object.stack], ['NonError', '{"code":"E_LIMIT","retry":false}', undefined])
    assert.deepEqual([text.name, text.message], ['NonError', 'plain text'])
  })

  test('a capture refused with 503 is retried; one refused with 400 is reported and resolves to undefined', async () => {
    const { client, errors } = await clientFor()
    const before = setup.proxy.captures.length
    setup.proxy.failCaptures(2, 503)
    assert.ok(await client.captureException(new Error('retried')))
    assert.equal(setup.proxy.captures.length, before + 1)

    setup.proxy.failCaptures(1, 400)
    assert.equal(await client.captureException(new Error('refused')), undefined)
    assert.deepEqual(
      errors.map((error) => [error.code, error.status]),
      [['capture_failed', 400]],
    )
  })

  test('flush() waits for captures in progress', async () => {
    const { client } = await clientFor()
    const before = setup.proxy.captures.length
    setup.proxy.failCaptures(1, 503, { 'retry-after': '1' })
    void client.captureException(new Error('slow'))
    await client.flush()
    assert.equal(setup.proxy.captures.length, before + 1)
  })

  for (const crash of ['uncaughtException', 'unhandledRejection'] as const) {
    test(`with captureProcessErrors, an ${crash} is captured, the queue flushed, and the process exits with 1`, async () => {
      const project = await createProject(setup.t)
      const before = setup.proxy.captures.length
      const child = await runNode(CRASHING_APP, {
        PORTAL_URL: setup.proxy.url,
        PORTAL_API_KEY: project.key,
        PORTAL_WEBHOOK_SECRET: project.webhookSecret,
        CRASH: crash,
      })

      assert.equal(child.code, 1)
      const expected = crash === 'uncaughtException' ? ['TypeError', 'boom in a timer'] : ['RangeError', 'boom in a promise']
      assert.match(child.stderr, new RegExp(`${expected[0]}: ${expected[1]}`))
      assert.equal(setup.proxy.captures.length, before + 1)
      const capture = setup.proxy.captures.at(-1)!.body
      assert.deepEqual([capture.name, capture.message, capture.mechanism, capture.handled, capture.release], [...expected, crash, false, 'crash@1.0.0'])
      const logs = await storedEvents(setup.t.url, setup.t.adminToken, project.id)
      assert.deepEqual(
        logs.map((log) => log.data.message),
        [`queued before ${crash}`],
      )
    })
  }
})

function runNode(script: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env }, timeout: 30_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr })
    })
  })
}

describe(`SDK captureException into a real portal's errors module (${dialect})`, () => {
  test('a capture whose answer was lost is sent again with its idempotency key and counted once', async () => {
    const { startTestPortal } = await import('../../test/support/portal.ts')
    const { PortalClient } = await import('../src/index.ts')
    const portal = await startTestPortal(dialect)
    const proxy = await startFaultProxy(portal.url, { forwardCaptures: true })
    try {
      const project = await createProject(portal)
      const client = new PortalClient({ baseUrl: proxy.url, apiKey: project.key, webhookSecret: project.webhookSecret, retry: { minDelayMs: 10, maxDelayMs: 50 } })
      proxy.loseIngestAnswers(1)
      const result = await client.captureException(new TypeError('answer lost on the way back'))
      await client.close()
      assert.equal(result?.isNewGroup, true, 'the retry is answered with the first answer')
      const groups = await portal.request('GET', `/api/errors/groups?project_id=${project.id}`, { token: portal.viewerToken })
      assert.equal(groups.body.data.length, 1)
      assert.equal(groups.body.data[0].count, 1, 'stored once, though sent twice')
    } finally {
      await proxy.close()
      await portal.close()
    }
  })

  test('the same exception thrown from the same place twice lands in one group, readable by the API', async () => {
    const { startTestPortal } = await import('../../test/support/portal.ts')
    const { PortalClient } = await import('../src/index.ts')
    const portal = await startTestPortal(dialect)
    try {
      const project = await createProject(portal)
      const client = new PortalClient({ baseUrl: portal.url, apiKey: project.key, webhookSecret: project.webhookSecret, release: 'api@3.1.0' })
      const failAt = (orderId: number) => {
        try {
          throw new RangeError(`order ${orderId} has no lines`)
        } catch (error) {
          return error
        }
      }
      const first = await client.captureException(failAt(17), { environment: 'production' })
      const second = await client.captureException(failAt(42), { environment: 'production' })
      await client.close()
      assert.equal(first?.isNewGroup, true)
      assert.equal(second?.isNewGroup, false)
      assert.equal(second?.fingerprint, first?.fingerprint)
      const groups = await portal.request('GET', `/api/errors/groups?project_id=${project.id}`, { token: portal.viewerToken })
      assert.equal(groups.status, 200)
      assert.equal(groups.body.data.length, 1)
      assert.equal(groups.body.data[0].name, 'RangeError')
      assert.equal(groups.body.data[0].count, 2)
      assert.deepEqual(groups.body.data[0].releases, ['api@3.1.0'])
    } finally {
      await portal.close()
    }
  })
})
