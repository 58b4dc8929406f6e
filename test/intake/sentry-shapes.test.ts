import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { createProject, DIALECTS, readAll, startTestPortal, type TestPortal, type TestResponse } from '../support/portal.ts'

type Json = Record<string, unknown>

const METRICS_TOKEN = 'metrics-token-sentry-shapes-0123456789'

const envelope = (...lines: unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')
const frames = [{ function: 'charge', filename: 'pay.js', abs_path: '/srv/app/pay.js', lineno: 4, in_app: true }]
const exception = { type: 'PaymentError', value: 'card 4 declined', stacktrace: { frames } }

/**
 * Each documented shape of the fields that decide what an event is (Sentry's event schema: `exception`
 * as `{ values }`, a list or one object; `message` and `logentry` as text or `{ message, params,
 * formatted }`; the stacks of message events), with null, missing and wrong-typed variants. The
 * fields a shape breaks are named in `droppedFields`.
 */
const SHAPES: [string, Json, string[]][] = [
  ['exception as { values: [...] }', { exception: { values: [exception] } }, []],
  ['exception as a list', { exception: [exception] }, []],
  ['exception as one object', { exception }, []],
  ['exception values null', { exception: { values: null }, message: 'no exception after all' }, []],
  ['exception null', { exception: null }, []],
  ['exception missing, nothing else', {}, []],
  ['exception a string', { exception: 'boom' }, ['exception']],
  ['exception a number', { exception: 42 }, ['exception']],
  ['exception values a string', { exception: { values: 'boom' } }, ['exception.values']],
  ['exception values holding null and a number', { exception: { values: [null, 7, exception] } }, ['exception.values.1']],
  ['stacktrace null', { exception: { values: [{ type: 'E', value: 'v', stacktrace: null }] } }, []],
  ['frames null', { exception: { values: [{ type: 'E', value: 'v', stacktrace: { frames: null } }] } }, []],
  ['frames a string', { exception: { values: [{ type: 'E', value: 'v', stacktrace: { frames: 'x' } }] } }, []],
  ['type a number, value a boolean', { exception: { values: [{ type: 404, value: false }] } }, []],
  ['type and value missing', { exception: { values: [{ stacktrace: { frames } }] } }, []],
  ['mechanism of the wrong types', { exception: { values: [{ ...exception, mechanism: { exception_id: 'one', parent_id: null, is_exception_group: 'yes' } }] } }, []],
  ['message a string', { message: 'queue 12 is long' }, []],
  ['message an object with params', { message: { message: 'queue %s is long', params: ['12'] } }, []],
  ['message an object with formatted', { message: { formatted: 'queue 12 is long' } }, []],
  ['logentry with params by name', { logentry: { message: 'queue %(name)s is long', params: { name: 'mail' } } }, []],
  ['logentry with formatted and message', { logentry: { formatted: 'queue 12 is long', message: 'queue %s is long' } }, []],
  ['message a number', { message: 12 }, []],
  ['message a list', { message: ['a'] }, ['message']],
  ['logentry null, message a string', { logentry: null, message: 'fallback' }, []],
  ['logentry empty', { logentry: {} }, []],
  ['message with a stacktrace (attachStacktrace)', { message: 'slow', stacktrace: { frames } }, []],
  ['message with threads', { message: 'slow', threads: { values: [{ id: 1, crashed: true, stacktrace: { frames } }] } }, []],
  ['threads a string', { message: 'slow', threads: 'x' }, []],
  ['tags, user and contexts of wrong types', { message: 'odd', tags: 'x', user: 3, contexts: [] }, []],
]

for (const dialect of DIALECTS) {
  describe(`Sentry intake: every shape is stored or refused, never lost (${dialect})`, () => {
    let t: TestPortal
    let projectId: string
    let key: string
    let number: string

    before(async () => {
      t = await startTestPortal(dialect, { INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000', METRICS_TOKEN })
      projectId = (await createProject(t, 'shapes')).id
      const created = await t.request('POST', `/api/projects/${projectId}/keys`, { token: t.adminToken, body: { name: 'sentry', scopes: ['sentry'] } })
      key = created.body.key
      number = created.body.sentryDsn.split('/').pop()
    })
    after(() => t.close())

    let sequence = 0
    const nextId = () => (++sequence).toString(16).padStart(32, '0')
    const sendEnvelope = (body: string) => t.request('POST', `/api/${number}/envelope/?sentry_key=${key}`, { body, headers: { 'content-type': 'application/x-sentry-envelope' } })
    const sendStore = (event: Json) => t.request('POST', `/api/${number}/store/?sentry_key=${key}`, { body: event })
    const storedEvents = async () => new Map((await readAll(t, `/api/errors/events?project_id=${projectId}`)).map((event) => [event.data.eventId as string, event.data]))

    test('each documented shape, through the store and the envelope endpoints, is stored as an error event; a broken field is named', async () => {
      const sent: [string, string, string[]][] = []
      for (const [what, fields, dropped] of SHAPES) {
        const viaStore = nextId()
        const viaEnvelope = nextId()
        const stored = await sendStore({ ...fields, event_id: viaStore })
        assert.equal(stored.status, 200, `${what} (store): ${stored.text}`)
        const enveloped = await sendEnvelope(envelope({ event_id: viaEnvelope }, { type: 'event' }, { ...fields, event_id: viaEnvelope }))
        assert.equal(enveloped.status, 200, `${what} (envelope): ${enveloped.text}`)
        sent.push([what, viaStore, dropped], [what, viaEnvelope, dropped])
      }
      const events = await storedEvents()
      for (const [what, id, dropped] of sent) {
        const data = events.get(id)
        assert.ok(data, `${what}: stored`)
        assert.deepEqual(((data.droppedFields as string[] | undefined) ?? []).map((reason) => reason.split(':')[0]), dropped, `${what}: the fields dropped are named`)
      }
      const single = [...events.values()].find((data) => data.eventId === sent[4][1])!
      assert.equal(single.name, 'PaymentError', 'a single exception object is read as the exception')
      const byName = [...events.values()].find((data) => data.message === 'queue mail is long')
      assert.equal(byName?.messageTemplate, 'queue %(name)s is long', 'the template is kept for grouping')
    })

    test('what the portal cannot take is refused whole with a 400 naming the item, never answered 200 and dropped', async () => {
      const good = nextId()
      const deep = envelope({ event_id: good }, { type: 'event' }, { event_id: good, message: 'fine' }, { type: 'event' }, { event_id: nextId(), message: 'deep', extra: nest(80) })
      const refused = await sendEnvelope(deep)
      assert.equal(refused.status, 400)
      assert.match(refused.body.detail, /envelope item 1 \(event\)/)
      const noTrace = await sendEnvelope(envelope({}, { type: 'transaction' }, { type: 'transaction', transaction: 'GET /', start_timestamp: 1, timestamp: 2 }))
      assert.equal(noTrace.status, 400)
      assert.match(noTrace.body.detail, /envelope item 0 \(transaction\): contexts\.trace\.trace_id/)
      const notObject = await sendStore([1, 2] as unknown as Json)
      assert.equal(notObject.status, 400)
      assert.ok(!(await storedEvents()).has(good), 'nothing of a refused envelope is stored')
    })

    test('items of kinds the portal does not keep are answered in X-Sentry-Rate-Limits for their category, beside the stored event', async () => {
      const id = nextId()
      const body = envelope(
        { event_id: id },
        { type: 'event' },
        { event_id: id, message: 'with attachments' },
        { type: 'attachment', length: 5, filename: 'a.txt' },
        'hello',
        { type: 'profile' },
        {},
        { type: 'client_report' },
        { discarded_events: [{ reason: 'ratelimit_backoff', category: 'attachment', quantity: 2 }] },
      )
      const discarded = async () => {
        const metrics = await t.request('GET', '/metrics', { token: METRICS_TOKEN })
        return Number(/portal_sentry_client_discarded_events_total\{reason="ratelimit_backoff",category="attachment"\} (\d+)/.exec(metrics.text)?.[1] ?? 0)
      }
      const before = await discarded()
      const answer = await sendEnvelope(body)
      assert.equal(answer.status, 200, answer.text)
      assert.equal(answer.headers.get('x-sentry-rate-limits'), '3600:attachment;profile:key:unsupported')
      assert.ok((await storedEvents()).has(id))
      assert.equal((await discarded()) - before, 2, 'what the SDK reports it discarded is counted')
    })

    test('fuzz: events of random shapes through both endpoints are each stored or refused with a 4xx, none lost', async () => {
      const anyValue = fc.anything({ maxDepth: 3, maxKeys: 4, withNullPrototype: false })
      const frameArb = fc.record({ function: fc.oneof(fc.string(), anyValue), filename: fc.oneof(fc.string(), anyValue), abs_path: fc.string(), lineno: fc.oneof(fc.nat(), anyValue), in_app: fc.oneof(fc.boolean(), anyValue) }, { requiredKeys: [] })
      const stacktraceArb = fc.oneof(fc.record({ frames: fc.oneof(fc.array(fc.oneof(frameArb, anyValue), { maxLength: 4 }), anyValue) }, { requiredKeys: [] }), anyValue)
      const mechanismArb = fc.record({ exception_id: fc.oneof(fc.nat(4), anyValue), parent_id: fc.oneof(fc.nat(4), anyValue), is_exception_group: fc.oneof(fc.boolean(), anyValue), synthetic: fc.boolean() }, { requiredKeys: [] })
      const exceptionArb = fc.record({ type: fc.oneof(fc.string(), anyValue), value: fc.oneof(fc.string(), anyValue), stacktrace: stacktraceArb, mechanism: fc.oneof(mechanismArb, anyValue) }, { requiredKeys: [] })
      const entryArb = fc.oneof(fc.string(), fc.record({ message: fc.oneof(fc.string(), anyValue), formatted: fc.oneof(fc.string(), anyValue), params: fc.oneof(fc.array(anyValue, { maxLength: 3 }), anyValue) }, { requiredKeys: [] }), anyValue)
      const eventArb = fc.record(
        {
          exception: fc.oneof(fc.record({ values: fc.oneof(fc.array(fc.oneof(exceptionArb, anyValue), { maxLength: 4 }), anyValue) }), fc.array(exceptionArb, { maxLength: 3 }), exceptionArb, anyValue),
          message: entryArb,
          logentry: entryArb,
          stacktrace: stacktraceArb,
          threads: fc.oneof(fc.record({ values: fc.array(fc.record({ crashed: fc.boolean(), stacktrace: stacktraceArb }), { maxLength: 2 }) }), anyValue),
          fingerprint: fc.oneof(fc.array(fc.oneof(fc.string(), fc.integer(), anyValue), { maxLength: 3 }), anyValue),
          level: fc.oneof(fc.constantFrom('error', 'warning', 'info', 'fatal'), anyValue),
          tags: anyValue,
          timestamp: fc.oneof(fc.double(), fc.string(), anyValue),
          platform: fc.oneof(fc.constantFrom('javascript', 'node', 'python', 'java', 'go'), anyValue),
        },
        { requiredKeys: [] },
      )
      const accepted: string[] = []
      let refused = 0
      const unexpected: string[] = []
      await fc.assert(
        fc.asyncProperty(eventArb, fc.boolean(), async (fields, viaStore) => {
          const id = nextId()
          const event = { ...fields, event_id: id }
          const answer: TestResponse = viaStore ? await sendStore(event) : await sendEnvelope(envelope({ event_id: id }, { type: 'event' }, event))
          if (answer.status === 200) accepted.push(id)
          else if (answer.status >= 400 && answer.status < 500 && typeof answer.body?.detail === 'string') refused++
          else unexpected.push(`${answer.status} ${answer.text.slice(0, 200)} for ${JSON.stringify(event).slice(0, 300)}`)
        }),
        { numRuns: 150, seed: 38 },
      )
      assert.deepEqual(unexpected, [], 'every answer is a 200 or a 4xx problem naming why')
      const stored = await storedEvents()
      const lost = accepted.filter((id) => !stored.has(id))
      assert.equal(lost.length, 0, `answered 200 but not stored: ${lost.join(', ')}`)
      assert.equal(accepted.length + refused, 150)
    })
  })
}

function nest(depth: number): unknown {
  let value: unknown = 'leaf'
  for (let level = 0; level < depth; level++) value = { inner: value }
  return value
}
