import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, ingest, startTestPortal, type TestPortal } from '../support/portal.ts'
import { createEndpoint, deliver, endedDelivery, FAST_WEBHOOKS, readDelivery } from './api.ts'
import { eventually, startReceiver, verifyCall, type Receiver } from './receiver.ts'

for (const dialect of DIALECTS) {
  describe(`webhook deliveries on ${dialect}`, () => {
    let t: TestPortal
    let receiver: Receiver
    before(async () => {
      t = await startTestPortal(dialect, FAST_WEBHOOKS)
      receiver = await startReceiver()
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    test('a 200 receiver gets a generic body signed by Standard Webhooks, and the attempt is recorded', async () => {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url('/ok/generic'))
      assert.match(endpoint.secret, /^whsec_/)
      const sent = await deliver(t, project.id, 'invoice.paid', { amount: 12 })
      assert.equal(sent.deliveries.length, 1)
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.status, 'succeeded')
      const [call] = receiver.callsTo('/ok/generic')
      const verified = verifyCall(endpoint.secret, call) as any
      assert.deepEqual(verified, { id: sent.messageId, type: 'invoice.paid', timestamp: verified.timestamp, data: { amount: 12 } })
      assert.equal(call.headers['webhook-id'], sent.messageId)
      const [attempt] = delivery.attempts
      assert.equal(attempt.number, 1)
      assert.equal(attempt.status, 'succeeded')
      assert.equal(attempt.response.statusCode, 200)
      assert.equal(attempt.response.body, 'thanks')
      assert.equal(attempt.request.headers['webhook-signature'], call.headers['webhook-signature'])
      assert.equal(attempt.request.bodySize, Buffer.byteLength(call.body))
      assert.equal(attempt.secretId, endpoint.secretId)
      assert.equal(delivery.nextAttemptAt, null)
    })

    test('a 500 receiver gets every scheduled attempt with the same webhook-id, each recorded, then the delivery fails', async () => {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url('/fail/500'))
      const sent = await deliver(t, project.id, 'order.created', { n: 1 })
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.status, 'failed')
      assert.deepEqual(delivery.attempts.map((a: any) => [a.number, a.status, a.response.statusCode]), [[1, 'failed', 500], [2, 'failed', 500], [3, 'failed', 500]])
      assert.equal(delivery.attempts[0].response.body, 'receiver broke')
      const calls = receiver.callsTo('/fail/500')
      assert.equal(calls.length, 3)
      for (const call of calls) {
        assert.equal(call.headers['webhook-id'], sent.messageId)
        verifyCall(endpoint.secret, call)
      }
    })

    test('an endpoint that hangs past WEBHOOK_TIMEOUT_MS gives timeout attempts', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/hang/timeout'))
      const sent = await deliver(t, project.id, 'x.y', {})
      const delivery = await endedDelivery(t, sent.deliveries[0].id, 15_000)
      assert.equal(delivery.status, 'failed')
      assert.deepEqual(delivery.attempts.map((a: any) => a.status), ['timeout', 'timeout', 'timeout'])
      assert.ok(delivery.attempts.every((a: any) => a.durationMs >= 900 && a.response === null && /WEBHOOK_TIMEOUT_MS/.test(a.error)))
    })

    test('a receiver answering slowly within WEBHOOK_TIMEOUT_MS succeeds, and the attempt shows how long it took', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/slow/400'))
      const sent = await deliver(t, project.id, 'x.y', {})
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.status, 'succeeded')
      assert.equal(delivery.attempts.length, 1)
      assert.ok(delivery.attempts[0].durationMs >= 400, `${delivery.attempts[0].durationMs} ms`)
      assert.equal(delivery.attempts[0].response.body, 'slow thanks')
    })

    test('a connection reset gives network_error attempts', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/reset/now'))
      const sent = await deliver(t, project.id, 'x.y', {})
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.deepEqual(delivery.attempts.map((a: any) => a.status), ['network_error', 'network_error', 'network_error'])
      assert.ok(delivery.attempts[0].error.length > 0)
    })

    test('a redirect is not followed: the 302 is a failed attempt', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/redirect/once'))
      const before = receiver.callsTo('/ok').length
      const sent = await deliver(t, project.id, 'x.y', {})
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.attempts[0].response.statusCode, 302)
      assert.equal(delivery.attempts[0].status, 'failed')
      assert.equal(receiver.callsTo('/ok').length, before)
    })

    test('a 410 ends the delivery at once, disables the endpoint and announces endpoint.disabled', async () => {
      const project = await createProject(t)
      const listener = await createEndpoint(t, project.id, receiver.url('/ok/disabled-listener'), { eventTypes: ['endpoint.disabled'] })
      const gone = await createEndpoint(t, project.id, receiver.url('/gone/1'), { eventTypes: ['order.created'] })
      const sent = await deliver(t, project.id, 'order.created', {})
      assert.deepEqual(sent.deliveries.map((d) => d.endpointId), [gone.id])
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.status, 'failed')
      assert.equal(delivery.attempts.length, 1)
      const endpoint = (await t.request('GET', `/api/webhooks/endpoints/${gone.id}`, { token: t.viewerToken })).body
      assert.equal(endpoint.enabled, false)
      assert.equal(endpoint.disabledReason, 'gone')
      const call = await eventually(() => receiver.callsTo('/ok/disabled-listener')[0], 5000, 'endpoint.disabled notification')
      const notice = verifyCall(listener.secret, call) as any
      assert.equal(notice.type, 'endpoint.disabled')
      assert.equal(notice.data.endpointId, gone.id)
      assert.equal(notice.data.reason, 'gone')
      const again = await t.request('POST', '/api/webhooks/deliver', { token: t.adminToken, body: { projectId: project.id, eventType: 'order.created', payload: {}, endpointIds: [gone.id] } })
      assert.equal(again.status, 422)
      assert.match(again.body.detail, /endpointIds\.0/)
    })

    test('a slow endpoint does not hold back the others', async () => {
      const project = await createProject(t)
      const slow = await createEndpoint(t, project.id, receiver.url('/hang/slow-endpoint'))
      const fast = await createEndpoint(t, project.id, receiver.url('/ok/fast-endpoint'))
      // enqueued at once, so that what is measured is the dispatcher and not how fast a loaded machine enqueues
      await Promise.all(Array.from({ length: 30 }, (_, i) => deliver(t, project.id, 'busy', { i }, [slow.id])))
      const started = Date.now()
      const sent = await deliver(t, project.id, 'busy', { fast: true }, [fast.id])
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.status, 'succeeded')
      assert.ok(Date.now() - started < 800, `the fast endpoint waited ${Date.now() - started} ms`)
      const status = (await t.request('GET', `/api/webhooks/status?project_id=${project.id}`, { token: t.viewerToken })).body
      assert.ok(status.dispatcher.inFlight <= status.dispatcher.concurrency)
      // The most hung calls open at one moment: the per-endpoint limit, reached and never passed. (Counting the
      // calls of the first 900 ms instead assumed the receiver saw the first call at once: on a loaded machine it
      // saw it late, and a 17th came in once the first attempt's timeout ended it.)
      const hung = receiver.callsTo('/hang/slow-endpoint')
      const openAt = (moment: number) => hung.filter((call) => call.at <= moment && (call.endedAt ?? Infinity) > moment).length
      assert.equal(Math.max(...hung.map((call) => openAt(call.at))), status.dispatcher.endpointConcurrency)
    })

    test('Retry-After on a 429 is honoured over a shorter scheduled delay', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/limited/1'))
      const sent = await deliver(t, project.id, 'x.y', {})
      const delivery = await eventually(async () => {
        const d = await readDelivery(t, sent.deliveries[0].id)
        return d.attempts.length >= 2 ? d : undefined
      }, 5000)
      const gap = Date.parse(delivery.attempts[1].startedAt) - Date.parse(delivery.attempts[0].startedAt)
      assert.ok(gap >= 1000, `second attempt came ${gap} ms after the first`)
      assert.equal(delivery.attempts[0].response.headers['retry-after'], '1')
    })

    test('slack and discord endpoints get the bodies those services accept', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/ok/slack'), { kind: 'slack' })
      await createEndpoint(t, project.id, receiver.url('/ok/discord'), { kind: 'discord' })
      const sent = await deliver(t, project.id, 'deploy.failed', { service: 'api', version: '1.2.3' })
      await Promise.all(sent.deliveries.map((d) => endedDelivery(t, d.id)))
      const slack = JSON.parse(receiver.callsTo('/ok/slack')[0].body)
      assert.match(slack.text, /deploy\.failed.*service: api/)
      assert.equal(slack.blocks[0].type, 'section')
      assert.match(slack.blocks[1].text.text, /"version": "1\.2\.3"/)
      const discord = JSON.parse(receiver.callsTo('/ok/discord')[0].body)
      assert.match(discord.content, /deploy\.failed/)
      assert.equal(discord.embeds[0].title, 'deploy.failed')
      assert.match(discord.embeds[0].description, /"service": "api"/)
    })

    test('endpoints get only the event types they subscribe to', async () => {
      const project = await createProject(t)
      const a = await createEndpoint(t, project.id, receiver.url('/ok/types-a'), { eventTypes: ['a.happened'] })
      const all = await createEndpoint(t, project.id, receiver.url('/ok/types-all'))
      const sent = await deliver(t, project.id, 'b.happened', {})
      assert.deepEqual(sent.deliveries.map((d) => d.endpointId), [all.id])
      const sentA = await deliver(t, project.id, 'a.happened', {})
      assert.deepEqual(sentA.deliveries.map((d) => d.endpointId).sort(), [a.id, all.id].sort())
    })

    test('a failed delivery is retried by hand with the same webhook-id and the next attempt number', async () => {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url('/manual/retry'))
      receiver.answer('/manual/retry', 'fail')
      const sent = await deliver(t, project.id, 'x.y', {})
      await endedDelivery(t, sent.deliveries[0].id)
      const refused = await t.request('POST', `/api/webhooks/deliveries/${sent.deliveries[0].id}/retry`, { token: t.viewerToken })
      assert.equal(refused.status, 403)
      receiver.answer('/manual/retry', 'ok')
      const retried = await t.request('POST', `/api/webhooks/deliveries/${sent.deliveries[0].id}/retry`, { token: t.adminToken })
      assert.equal(retried.status, 202, retried.text)
      assert.equal(retried.body.status, 'pending')
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.status, 'succeeded')
      assert.deepEqual(delivery.attempts.map((a: any) => a.number), [1, 2, 3, 4])
      const calls = receiver.callsTo('/manual/retry')
      assert.equal(calls.length, 4)
      assert.ok(calls.every((call) => call.headers['webhook-id'] === sent.messageId))
      verifyCall(endpoint.secret, calls[3])
    })

    test('recover re-sends the endpoint’s failed deliveries since the given time, once each', async () => {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url('/recover/me'))
      receiver.answer('/recover/me', 'fail')
      const since = new Date().toISOString()
      const sent = [await deliver(t, project.id, 'x.y', { i: 1 }), await deliver(t, project.id, 'x.y', { i: 2 })]
      for (const s of sent) await endedDelivery(t, s.deliveries[0].id)
      receiver.answer('/recover/me', 'ok')
      const recovered = await t.request('POST', `/api/webhooks/endpoints/${endpoint.id}/recover`, { token: t.adminToken, body: { since } })
      assert.equal(recovered.status, 202, recovered.text)
      assert.deepEqual(recovered.body.deliveries.map((d: any) => d.id).sort(), sent.map((s) => s.deliveries[0].id).sort())
      for (const s of sent) assert.equal((await endedDelivery(t, s.deliveries[0].id)).status, 'succeeded')
      const bad = await t.request('POST', `/api/webhooks/endpoints/${endpoint.id}/recover`, { token: t.adminToken, body: { since: 'yesterday' } })
      assert.equal(bad.status, 400)
      assert.match(bad.body.detail, /since/)
    })

    test('a failed deploy ingested for the project is delivered as deploy.failed to subscribers', async () => {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url('/ok/deploys'), { eventTypes: ['deploy.failed'] })
      const res = await ingest(t, project, [event('deploy', { service: 'api', status: 'succeeded' }), event('deploy', { service: 'api', version: '2', status: 'failed' })])
      assert.equal(res.body.accepted, 2)
      const call = await eventually(() => receiver.callsTo('/ok/deploys')[0], 5000, 'deploy.failed notification')
      const body = verifyCall(endpoint.secret, call) as any
      assert.equal(body.type, 'deploy.failed')
      assert.equal(body.data.service, 'api')
      assert.equal(body.data.version, '2')
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.equal(receiver.callsTo('/ok/deploys').length, 1, 'the succeeded deploy is not announced')
    })

    test('deliveries are listed newest first by project, endpoint and status, with cursor pages', async () => {
      const project = await createProject(t)
      const ok = await createEndpoint(t, project.id, receiver.url('/ok/list'))
      const sent = []
      for (let i = 0; i < 3; i++) sent.push(await deliver(t, project.id, 'list.me', { i }))
      for (const s of sent) await endedDelivery(t, s.deliveries[0].id)
      const page1 = await t.request('GET', `/api/webhooks/deliveries?project_id=${project.id}&endpoint_id=${ok.id}&status=succeeded&limit=2`, { token: t.viewerToken })
      assert.equal(page1.status, 200, page1.text)
      assert.deepEqual(page1.body.data.map((d: any) => d.id), [sent[2].deliveries[0].id, sent[1].deliveries[0].id])
      const page2 = await t.request('GET', `/api/webhooks/deliveries?project_id=${project.id}&endpoint_id=${ok.id}&status=succeeded&limit=2&cursor=${page1.body.nextCursor}`, { token: t.viewerToken })
      assert.deepEqual(page2.body.data.map((d: any) => d.id), [sent[0].deliveries[0].id])
      assert.equal(page2.body.nextCursor, null)
      const afterLast = new Date(Date.now() + 1000).toISOString()
      const window = await t.request('GET', `/api/webhooks/deliveries?project_id=${project.id}&from=${afterLast}`, { token: t.viewerToken })
      assert.deepEqual(window.body.data, [])
      const none = await t.request('GET', `/api/webhooks/deliveries?project_id=${project.id}&status=failed`, { token: t.viewerToken })
      assert.deepEqual(none.body.data, [])
      const unknown = await t.request('GET', `/api/webhooks/deliveries?project_id=${project.id}&colour=red`, { token: t.viewerToken })
      assert.equal(unknown.status, 400)
      assert.match(unknown.body.detail, /colour/)
    })

    test('the status read reports queue depth, oldest pending age, last hour’s success rate and the dispatcher', async () => {
      const project = await createProject(t)
      await createEndpoint(t, project.id, receiver.url('/ok/status'))
      const sent = await deliver(t, project.id, 'x.y', {})
      await endedDelivery(t, sent.deliveries[0].id)
      const res = await t.request('GET', `/api/webhooks/status?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.queueDepth, 0)
      assert.equal(res.body.oldestPendingAgeMs, null)
      assert.equal(res.body.attemptsLastHour, 1)
      assert.equal(res.body.successRateLastHour, 1)
      assert.equal(res.body.dispatcher.state, 'running')
      const all = await t.request('GET', '/api/webhooks/status', { token: t.viewerToken })
      assert.ok(all.body.attemptsLastHour > 1)
      assert.ok(all.body.successRateLastHour > 0 && all.body.successRateLastHour < 1)
    })
  })
}

for (const dialect of DIALECTS) {
  describe(`webhook endpoint health and secret grace on ${dialect}`, () => {
    let t: TestPortal
    let receiver: Receiver
    before(async () => {
      t = await startTestPortal(dialect, {
        ...FAST_WEBHOOKS,
        WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3,0.3,0.3,0.3',
        WEBHOOK_DISABLE_AFTER_FAILING_SECONDS: '1',
        WEBHOOK_ROTATION_GRACE_SECONDS: '0',
      })
      receiver = await startReceiver()
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    test('an endpoint failing every attempt for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS is disabled and announced', async () => {
      const project = await createProject(t)
      const listener = await createEndpoint(t, project.id, receiver.url('/ok/failing-listener'), { eventTypes: ['endpoint.disabled'] })
      const failing = await createEndpoint(t, project.id, receiver.url('/fail/always'), { eventTypes: ['x.y'] })
      const sent = await deliver(t, project.id, 'x.y', {})
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      assert.equal(delivery.status, 'failed')
      const endpoint = (await t.request('GET', `/api/webhooks/endpoints/${failing.id}`, { token: t.viewerToken })).body
      assert.equal(endpoint.enabled, false)
      assert.equal(endpoint.disabledReason, 'failing')
      assert.equal(endpoint.failingSince, delivery.attempts[0].startedAt)
      // disabled when an attempt is recorded a second after the run began (that attempt may have started just before it)
      const failingMs = Date.parse(endpoint.disabledAt) - Date.parse(endpoint.failingSince)
      assert.ok(delivery.attempts.length < 7 && failingMs >= 1000, `${delivery.attempts.length} attempts, disabled ${failingMs} ms into the run`)
      const call = await eventually(() => receiver.callsTo('/ok/failing-listener')[0], 5000, 'endpoint.disabled notification')
      const notice = verifyCall(listener.secret, call) as any
      assert.deepEqual([notice.type, notice.data.endpointId, notice.data.reason], ['endpoint.disabled', failing.id, 'failing'])
    })

    test('a success clears the failing run', async () => {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url('/flaky/once'))
      let answered = 0
      receiver.answer('/flaky/once', (_call, response) => response.writeHead(answered++ === 0 ? 500 : 200).end())
      const sent = await deliver(t, project.id, 'x.y', {})
      assert.equal((await endedDelivery(t, sent.deliveries[0].id)).status, 'succeeded')
      const read = (await t.request('GET', `/api/webhooks/endpoints/${endpoint.id}`, { token: t.viewerToken })).body
      assert.equal(read.failingSince, null)
      assert.equal(read.enabled, true)
    })

    test('once the grace period is over, only the new secret signs', async () => {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url('/ok/after-grace'))
      const rotated = (await t.request('POST', `/api/webhooks/endpoints/${endpoint.id}/rotate`, { token: t.adminToken })).body
      const sent = await deliver(t, project.id, 'x.y', {})
      const delivery = await endedDelivery(t, sent.deliveries[0].id)
      const [call] = receiver.callsTo('/ok/after-grace')
      assert.equal(call.headers['webhook-signature'].split(' ').length, 1)
      verifyCall(rotated.secret, call)
      assert.throws(() => verifyCall(endpoint.secret, call))
      assert.equal(delivery.attempts[0].secretId, rotated.secretId)
    })
  })
}
