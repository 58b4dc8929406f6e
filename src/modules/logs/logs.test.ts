import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { SCAN_WINDOW } from '../../modules/event-reads.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

for (const dialect of DIALECTS) {
  describe(`logs reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      const sibling = await createProject(t, 'sibling')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('log', { level: 'error', message: 'Payment FAILED for order 7', module: 'billing', fields: { requestId: 'r-1', attempt: 2, retried: true } }, at(5)),
        event('log', { level: 'info', message: 'order 7 created', module: 'orders', fields: { requestId: 'r-1' } }, at(1)),
        event('log', { level: 'info', message: 'order 8 created', module: 'orders', fields: { requestId: 'r-2' } }, at(2)),
        event('log', { level: 'warn', message: '100% of quota_used', module: 'billing' }, at(3)),
        event('log', { message: 'no level here' }, at(4)),
        event('log', { level: 'info', message: 'late but early', module: 'orders' }, at(-60)),
      ])
      await ingestAll(t, sibling, [event('log', { level: 'error', message: 'sibling failure' }, at(1))])
      await ingestAll(t, other.project, [event('log', { level: 'error', message: 'other org failure' }, at(1))])
    })
    after(() => t.close())

    test('counts logs per level over a time range, most frequent first', async () => {
      const all = await read(t, `/api/modules/logs/levels?project_id=${project.id}`)
      assert.deepEqual(all.data, [
        { level: 'info', count: 3 },
        { level: 'error', count: 1 },
        { level: 'warn', count: 1 },
        { level: null, count: 1 },
      ])
      assert.equal(all.total, 6)
      const window = await read(t, `/api/modules/logs/levels?project_id=${project.id}&from=${at(0)}&to=${at(5)}`)
      assert.deepEqual(window.data, [
        { level: 'info', count: 2 },
        { level: 'warn', count: 1 },
        { level: null, count: 1 },
      ])
      const billing = await read(t, `/api/modules/logs/levels?project_id=${project.id}&module=billing`)
      assert.equal(billing.total, 2)
      const empty = await read(t, `/api/modules/logs/levels?project_id=${project.id}&from=${at(100)}`)
      assert.deepEqual(empty, { data: [], total: 0 })
    })

    test('counts over many hours add whole hours to the partial hours at either end', async () => {
      const hourly = await createProject(t, 'hourly')
      const base = Date.parse('2026-03-15T00:00:00.000Z')
      // one error every 20 minutes for 5 hours, sent newest first in two batches
      const errors = Array.from({ length: 15 }, (_, i) => event('log', { level: 'error', message: `e${i}` }, new Date(base + i * 20 * 60_000).toISOString())).reverse()
      await ingestAll(t, hourly, errors.slice(0, 7))
      await ingestAll(t, hourly, [...errors.slice(7), event('log', { message: 'no level' }, new Date(base + 90 * 60_000).toISOString())])
      const count = async (fromMinutes: number, toMinutes: number) => {
        const from = new Date(base + fromMinutes * 60_000).toISOString()
        const to = new Date(base + toMinutes * 60_000).toISOString()
        return (await read(t, `/api/modules/logs/levels?project_id=${hourly.id}&from=${from}&to=${to}`)).data
      }
      // 00:10–04:50 holds errors at 00:20 … 04:40 (14), and the unlevelled log at 01:30
      assert.deepEqual(await count(10, 290), [{ level: 'error', count: 14 }, { level: null, count: 1 }])
      // whole hours only: 01:00–03:00
      assert.deepEqual(await count(60, 180), [{ level: 'error', count: 6 }, { level: null, count: 1 }])
      // inside one hour, and an empty window
      assert.deepEqual(await count(61, 101), [{ level: 'error', count: 2 }, { level: null, count: 1 }])
      assert.deepEqual(await count(301, 400), [])
      const all = await read(t, `/api/modules/logs/levels?project_id=${hourly.id}`)
      assert.equal(all.total, 16)
      const since = await read(t, `/api/modules/logs/levels?project_id=${hourly.id}&from=${new Date(base + 250 * 60_000).toISOString()}`)
      assert.deepEqual(since.data, [{ level: 'error', count: 2 }])
    })

    test('filters events by level, module, text and context field, newest first', async () => {
      const infos = await read(t, `/api/modules/logs/events?project_id=${project.id}&level=info`)
      assert.deepEqual(infos.data.map((e: any) => e.data.message), ['order 8 created', 'order 7 created', 'late but early'])
      const text = await read(t, `/api/modules/logs/events?project_id=${project.id}&q=payment%20failed`)
      assert.deepEqual(text.data.map((e: any) => e.data.message), ['Payment FAILED for order 7'])
      const wildcard = await read(t, `/api/modules/logs/events?project_id=${project.id}&q=100%25`)
      assert.deepEqual(wildcard.data.map((e: any) => e.data.message), ['100% of quota_used'])
      const field = await read(t, `/api/modules/logs/events?project_id=${project.id}&field.requestId=r-1`)
      assert.deepEqual(field.data.map((e: any) => e.data.message), ['Payment FAILED for order 7', 'order 7 created'])
      const both = await read(t, `/api/modules/logs/events?project_id=${project.id}&field.requestId=r-1&module=orders`)
      assert.deepEqual(both.data.map((e: any) => e.data.message), ['order 7 created'])
      const number = await read(t, `/api/modules/logs/events?project_id=${project.id}&field.attempt=2&field.retried=true`)
      assert.equal(number.data.length, 1)
      const none = await read(t, `/api/modules/logs/events?project_id=${project.id}&field.requestId=r-404`)
      assert.deepEqual(none, { data: [], nextCursor: null })
    })

    test('an event reads back with the data it was sent: its schema’s fields first, in the schema’s order, then the others as sent', async () => {
      const sent = await createProject(t, 'sent')
      await ingestAll(t, sent, [
        event('log', { zeta: 1, fields: { module: 'inner', b: 1, a: 2 }, module: 'payments', message: 'refund issued', alpha: { y: 1, x: 2 }, level: 'info' }, at(1)),
        event('log', { extra: true, message: 'no level or module' }, at(2)),
      ])
      const events = await read(t, `/api/modules/logs/events?project_id=${sent.id}`)
      // The response body's key order, which JSON.parse keeps: the same whichever store holds the events.
      assert.deepEqual(events.data.map((e: any) => JSON.stringify(e.data)), [
        '{"message":"no level or module","extra":true}',
        '{"message":"refund issued","level":"info","module":"payments","fields":{"module":"inner","b":1,"a":2},"zeta":1,"alpha":{"y":1,"x":2}}',
      ])
    })

    test('a text or field search looks through a bounded window per page and goes on from where it stopped', async () => {
      const many = await createProject(t, 'many')
      const minute = (i: number) => at(i / 1000)
      // SCAN_WINDOW + 10 logs; the rare request id is on the newest one and on the two oldest, beyond the first window
      const total = SCAN_WINDOW + 10
      const logs = Array.from({ length: total }, (_, i) => event('log', { message: `m${i}`, fields: { requestId: i < 2 || i === total - 1 ? 'rare' : `r${i}` } }, minute(i)))
      for (let start = 0; start < total; start += 1000) await ingestAll(t, many, logs.slice(start, start + 1000))

      const first = await read(t, `/api/modules/logs/events?project_id=${many.id}&field.requestId=rare&limit=5`)
      assert.deepEqual(first.data.map((e: any) => e.data.message), [`m${total - 1}`])
      assert.notEqual(first.nextCursor, null, 'the window ended before the page filled: the cursor searches on')
      const second = await read(t, `/api/modules/logs/events?project_id=${many.id}&field.requestId=rare&limit=5&cursor=${first.nextCursor}`)
      assert.deepEqual(second.data.map((e: any) => e.data.message), ['m1', 'm0'])
      assert.equal(second.nextCursor, null)

      const text = await read(t, `/api/modules/logs/events?project_id=${many.id}&q=m1&limit=3`)
      const newestWithM1 = logs.map((log) => log.data.message as string).filter((message) => message.includes('m1')).reverse().slice(0, 3)
      assert.deepEqual(text.data.map((e: any) => e.data.message), newestWithM1)
      const unfiltered = await read(t, `/api/modules/logs/events?project_id=${many.id}&limit=500&from=${minute(0)}&to=${minute(3)}`)
      assert.deepEqual(unfiltered.data.map((e: any) => e.data.message), ['m2', 'm1', 'm0'])
    })

    test('pages end exactly at the limit', async () => {
      const first = await read(t, `/api/modules/logs/events?project_id=${project.id}&limit=3`)
      const second = await read(t, `/api/modules/logs/events?project_id=${project.id}&limit=3&cursor=${first.nextCursor}`)
      assert.equal(second.data.length, 3)
      assert.equal(second.nextCursor, null)
      assert.deepEqual([...first.data, ...second.data].map((e: any) => e.ts), [at(5), at(4), at(3), at(2), at(1), at(-60)])
    })

    test('other projects and organisations stay out; bad parameters are named', async () => {
      const levels = await read(t, `/api/modules/logs/levels?project_id=${project.id}&level=error`, 400)
      assert.match(levels.detail, /query\.level/)
      await read(t, `/api/modules/logs/levels?project_id=${project.id}`, 404, other.token)
      await read(t, `/api/modules/logs/levels?project_id=${other.project.id}`, 404)
      const badFrom = await read(t, `/api/modules/logs/levels?project_id=${project.id}&from=yesterday`, 400)
      assert.match(badFrom.detail, /query\.from/)
      const badField = await read(t, `/api/modules/logs/events?project_id=${project.id}&field.=x`, 400)
      assert.match(badField.detail, /field\./)
      const emptyQ = await read(t, `/api/modules/logs/events?project_id=${project.id}&q=`, 400)
      assert.match(emptyQ.detail, /query\.q/)
    })
  })
}
