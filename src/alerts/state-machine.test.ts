import { test } from 'node:test'
import assert from 'node:assert/strict'
import { NEW_INSTANCE, nextStep, type InstanceState } from './state-machine.ts'

const rule = (extra: Partial<Parameters<typeof nextStep>[0]> = {}) => ({
  condition: { op: 'above' as const, compareTo: 'value' as const, critical: 10, warning: 5, resolve: 3 },
  pendingSeconds: 0,
  noData: 'ok' as const,
  targets: { endpointIds: [], repeatIntervalSeconds: null, sendResolved: true },
  ...extra,
})
const firing = (severity: 'warning' | 'critical', lastNotifiedAt = 0): InstanceState => ({ state: 'firing', severity, since: 0, lastNotifiedAt })

test('warning and critical thresholds fire with their severity; a change of severity notifies again', () => {
  assert.deepEqual(nextStep(rule(), NEW_INSTANCE, 6, 1000), { to: 'firing', severity: 'warning', threshold: 5, notify: 'firing', detail: null })
  assert.equal(nextStep(rule(), firing('warning'), 12, 1000)?.severity, 'critical')
  assert.equal(nextStep(rule(), firing('critical'), 12, 1000), null)
})

test('hysteresis: a firing alert stays firing until the value crosses the resolve threshold', () => {
  assert.equal(nextStep(rule(), firing('warning'), 4, 1000), null)
  assert.deepEqual(nextStep(rule(), firing('warning'), 3, 1000), { to: 'resolved', severity: null, threshold: 3, notify: 'resolved', detail: null })
  assert.equal(nextStep(rule({ targets: { endpointIds: [], repeatIntervalSeconds: null, sendResolved: false } }), firing('warning'), 1, 1000)?.notify, null)
})

test('the pending period holds before firing; a value back under it returns to ok without notifying', () => {
  const pendingRule = rule({ pendingSeconds: 60 })
  const pending = nextStep(pendingRule, NEW_INSTANCE, 12, 1000)
  assert.deepEqual([pending?.to, pending?.notify], ['pending', null])
  const held: InstanceState = { state: 'pending', severity: 'critical', since: 1000, lastNotifiedAt: null }
  assert.equal(nextStep(pendingRule, held, 12, 30_000), null)
  assert.equal(nextStep(pendingRule, held, 12, 61_000)?.to, 'firing')
  assert.deepEqual([nextStep(pendingRule, held, 1, 30_000)?.to, nextStep(pendingRule, held, 1, 30_000)?.notify], ['ok', null])
})

test('no data: ok resolves, alerting fires, keep changes nothing', () => {
  assert.equal(nextStep(rule({ noData: 'ok' }), firing('critical'), null, 1000)?.to, 'resolved')
  assert.equal(nextStep(rule({ noData: 'alerting' }), NEW_INSTANCE, null, 1000)?.to, 'firing')
  assert.equal(nextStep(rule({ noData: 'keep' }), firing('critical'), null, 1000), null)
})

test('the repeat interval reminds while firing; an error state recovers to ok', () => {
  const repeating = rule({ targets: { endpointIds: [], repeatIntervalSeconds: 600, sendResolved: true } })
  assert.equal(nextStep(repeating, firing('critical', 0), 12, 599_000), null)
  assert.equal(nextStep(repeating, firing('critical', 0), 12, 600_000)?.notify, 'repeat')
  assert.equal(nextStep(rule(), { state: 'error', severity: null, since: 0, lastNotifiedAt: null }, 1, 1000)?.to, 'ok')
})

test('below: thresholds and resolve mirror above', () => {
  const below = rule({ condition: { op: 'below', compareTo: 'value', critical: 1, resolve: 5 } })
  assert.equal(nextStep(below, NEW_INSTANCE, 0.5, 1000)?.to, 'firing')
  assert.equal(nextStep(below, firing('critical'), 3, 1000), null)
  assert.equal(nextStep(below, firing('critical'), 5, 1000)?.to, 'resolved')
})
