import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

const cost = (data: Record<string, unknown>, ts = '2026-02-10T00:00:00.000Z') => event('cost', { provider: 'aws', region: 'eu-west-1', ...data }, ts)

for (const dialect of DIALECTS) {
  describe(`costs reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      const sibling = await createProject(t, 'sibling')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        cost({ service: 'compute', amount: 20, currency: 'USD', period: '2026-02' }),
        cost({ service: 'compute', amount: 10.1, currency: 'USD', period: '2026-01' }),
        cost({ service: 'compute', amount: 5.05, currency: 'USD', period: '2026-01' }),
        cost({ service: 'storage', amount: 2, currency: 'USD', period: '2026-01', provider: 'gcp' }),
        cost({ service: 'compute', amount: 7, currency: 'EUR', period: '2026-01' }),
        cost({ service: 'compute', amount: 3.5, currency: 'EUR', period: '2026-02' }),
        // No period: it counts in the month of its time.
        cost({ service: 'compute', amount: 1.25, currency: 'USD' }, '2026-03-31T23:59:59.999Z'),
      ])
      await ingestAll(t, sibling, [cost({ service: 'compute', amount: 1000, currency: 'USD', period: '2026-02' })])
      await ingestAll(t, other.project, [cost({ service: 'compute', amount: 5000, currency: 'USD', period: '2026-02' })])
    })
    after(() => t.close())

    const rows = (body: any) => body.data.map((r: any) => [r.period, r.currency, r.group, r.total, r.previousTotal, r.change, r.changePercent])

    test('totals per month, service and currency, never summed across currencies, with month-over-month change', async () => {
      const body = await read(t, `/api/modules/costs/totals?project_id=${project.id}`)
      assert.equal(body.groupBy, 'service')
      assert.deepEqual(rows(body), [
        ['2026-03', 'USD', 'compute', 1.25, 20, -18.75, -93.75],
        ['2026-02', 'EUR', 'compute', 3.5, 7, -3.5, -50],
        ['2026-02', 'USD', 'compute', 20, 15.15, 4.85, 32.01],
        ['2026-01', 'EUR', 'compute', 7, null, null, null],
        ['2026-01', 'USD', 'compute', 15.15, null, null, null],
        ['2026-01', 'USD', 'storage', 2, null, null, null],
      ])
      assert.deepEqual(body.currencies, [
        { currency: 'EUR', total: 10.5, events: 2 },
        { currency: 'USD', total: 38.4, events: 5 },
      ])
    })

    test('a period window still compares its first month with the month before', async () => {
      const body = await read(t, `/api/modules/costs/totals?project_id=${project.id}&from_period=2026-02&to_period=2026-02&group_by=none`)
      assert.deepEqual(rows(body), [
        ['2026-02', 'EUR', null, 3.5, 7, -3.5, -50],
        ['2026-02', 'USD', null, 20, 17.15, 2.85, 16.62],
      ])
      assert.deepEqual(body.currencies, [
        { currency: 'EUR', total: 3.5, events: 1 },
        { currency: 'USD', total: 20, events: 1 },
      ])
    })

    test('groups by provider and filters by currency; no match is empty', async () => {
      const body = await read(t, `/api/modules/costs/totals?project_id=${project.id}&group_by=provider&currency=USD&to_period=2026-01`)
      assert.deepEqual(rows(body), [
        ['2026-01', 'USD', 'aws', 15.15, null, null, null],
        ['2026-01', 'USD', 'gcp', 2, null, null, null],
      ])
      const none = await read(t, `/api/modules/costs/totals?project_id=${project.id}&currency=JPY`)
      assert.deepEqual(none, { groupBy: 'service', data: [], currencies: [] })
    })

    test('the events list filters by currency and period, newest first', async () => {
      const body = await read(t, `/api/modules/costs/events?project_id=${project.id}&currency=USD&period=2026-03`)
      assert.deepEqual(body.data.map((e: any) => e.data.amount), [1.25])
    })

    test('bad values and other organisations are refused', async () => {
      assert.match((await read(t, `/api/modules/costs/totals?project_id=${project.id}&group_by=colour`, 400)).detail, /query\.group_by/)
      assert.match((await read(t, `/api/modules/costs/totals?project_id=${project.id}&from_period=2026-13`, 400)).detail, /query\.from_period/)
      assert.match((await read(t, `/api/modules/costs/totals?project_id=${project.id}&from_period=2026-03&to_period=2026-01`, 400)).detail, /query\.from_period/)
      assert.match((await read(t, `/api/modules/costs/totals?project_id=${project.id}&currency=usd`, 400)).detail, /query\.currency/)
      assert.match((await read(t, `/api/modules/costs/totals?project_id=${project.id}&month=2026-01`, 400)).detail, /query\.month/)
      await read(t, `/api/modules/costs/totals?project_id=${project.id}`, 404, other.token)
    })
  })
}
