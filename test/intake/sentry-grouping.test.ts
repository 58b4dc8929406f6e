import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import * as Sentry from '@sentry/node'
import { createProject, DIALECTS, readAll, startTestPortal, type TestPortal } from '../support/portal.ts'
import { createSentryKey } from '../support/sentry-key.ts'

// Each failure is thrown in a function of its own, so that its frames say which one it is.
function declineCard(card: number): Error {
  return new RangeError(`card ${card} declined`)
}

function reserveStock(sku: string): Error {
  return new TypeError(`sku ${sku} is out of stock`)
}

function failOrder(cause: Error): Error {
  return new Error('order failed', { cause })
}

for (const dialect of DIALECTS) {
  describe(`Sentry grouping with the real @sentry/node client (${dialect})`, () => {
    let t: TestPortal

    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(async () => {
      await Sentry.close(2000)
      await t.close()
    })

    /** A project of its own with a Sentry DSN, and the SDK initialised with it (linked errors on, as by default). */
    async function sentryProject(name: string): Promise<string> {
      const project = await createProject(t, name)
      Sentry.init({ dsn: (await createSentryKey(t, project.id)).dsn, defaultIntegrations: false, integrations: [Sentry.linkedErrorsIntegration()], release: `${name}@1` })
      return project.id
    }

    const groupsOf = async (projectId: string) => readAll(t, `/api/errors/groups?project_id=${projectId}`)

    test('AggregateErrors group by what failed inside them: one kind of failure joins the same failure thrown alone, two kinds are another group', async () => {
      const projectId = await sentryProject('aggregates')
      Sentry.captureException(new AggregateError([declineCard(1), declineCard(2)], 'payments failed'))
      Sentry.captureException(new AggregateError([declineCard(3)], 'payments failed'))
      Sentry.captureException(declineCard(4))
      Sentry.captureException(new AggregateError([declineCard(5), reserveStock('a-1')], 'checkout failed'))
      Sentry.captureException(new AggregateError([reserveStock('b-2'), declineCard(6)], 'checkout failed'))
      assert.equal(await Sentry.flush(5000), true)

      const groups = await groupsOf(projectId)
      assert.deepEqual(groups.map((group) => group.count).sort(), [2, 3], 'declined cards (in aggregates or alone) and declined-or-out-of-stock')
      const declined = groups.find((group) => group.count === 3)
      const detail = await t.request('GET', `/api/errors/groups/${declined.fingerprint}`, { token: t.adminToken })
      const types = detail.body.grouping[0].components.filter((component: any) => component.id === 'exception' && component.contributes).map((component: any) => component.values[0])
      assert.deepEqual(types, ['RangeError'], 'the aggregate itself does not count when one kind of failure is inside')
    })

    test('an error with causes groups on the whole chain: the same error with another cause is another group', async () => {
      const projectId = await sentryProject('causes-grouping')
      Sentry.captureException(failOrder(declineCard(1)))
      Sentry.captureException(failOrder(declineCard(2)))
      Sentry.captureException(failOrder(reserveStock('c-3')))
      assert.equal(await Sentry.flush(5000), true)
      assert.deepEqual((await groupsOf(projectId)).map((group) => group.count).sort(), [1, 2])
    })

    test('captureMessage makes error groups by its template (not by the stack the SDK attaches), keeping its level, and no log lines', async () => {
      const projectId = await sentryProject('messages')
      for (const queue of ['mail', 'sms']) Sentry.captureMessage(Sentry.parameterize`queue ${queue} is ${120} s behind`, 'warning')
      Sentry.captureMessage('disk 91% full', 'error')
      Sentry.captureMessage('disk 95% full', 'error')
      assert.equal(await Sentry.flush(5000), true)

      const groups = await groupsOf(projectId)
      assert.equal(groups.length, 2, 'one group per template; numbers stripped where there is none')
      const queue = groups.find((group) => group.message.startsWith('queue'))
      assert.equal(queue.count, 2)
      assert.equal(queue.name, '', 'a message event has no exception type')
      const occurrences = await readAll(t, `/api/errors/groups/${queue.fingerprint}/occurrences`)
      assert.deepEqual(occurrences.map((occurrence) => occurrence.metadata.level), ['warning', 'warning'])
      assert.deepEqual(occurrences.map((occurrence) => occurrence.metadata.messageTemplate), ['queue %s is %s s behind', 'queue %s is %s s behind'])
      const detail = await t.request('GET', `/api/errors/groups/${queue.fingerprint}`, { token: t.adminToken })
      assert.deepEqual(detail.body.grouping[0].components.filter((component: any) => component.contributes).map((component: any) => [component.id, component.values]), [
        ['message', ['queue %s is %s s behind']],
      ])
      assert.equal((await readAll(t, `/api/modules/logs/events?project_id=${projectId}`)).length, 0)
    })

    test('a fingerprint with variables ({{ type }}, {{ tags.NAME }}, {{ level }}) splits groups by the event’s values', async () => {
      const projectId = await sentryProject('variables')
      const capture = (tenant: string) =>
        Sentry.withScope((scope) => {
          scope.setTag('tenant', tenant)
          scope.setFingerprint(['{{ type }}', '{{ tags.tenant }}', '{{ level }}'])
          Sentry.captureException(declineCard(1))
        })
      capture('acme')
      capture('acme')
      capture('globex')
      assert.equal(await Sentry.flush(5000), true)
      const groups = await groupsOf(projectId)
      assert.deepEqual(groups.map((group) => group.count).sort(), [1, 2])
      const detail = await t.request('GET', `/api/errors/groups/${groups.find((group) => group.count === 2).fingerprint}`, { token: t.adminToken })
      assert.deepEqual(detail.body.grouping[0].components.find((component: any) => component.id === 'custom').values, ['RangeError', 'acme', 'error'])
    })
  })
}
