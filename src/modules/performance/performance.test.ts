import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { at, ingestAll, otherOrganisation, read, startReadsPortal } from '../../../test/support/module-reads.ts'

const HOUR_START = '2026-03-15T12:00:00.000Z'

for (const dialect of DIALECTS) {
  describe(`performance reads on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      other = await otherOrganisation(t)
      // latency 1..100 ms, one a minute from 12:00, sent in a scrambled order
      const latencies = Array.from({ length: 100 }, (_, i) => event('performance', { service: 'api', metric: 'latency', unit: 'ms', value: i + 1 }, at(i)))
      const scrambled = latencies.map((_, i) => latencies[(i * 37) % 100])
      await ingestAll(t, project, [
        ...scrambled,
        ...[30, 10, 20].map((value, i) => event('performance', { service: 'api', metric: 'cpu', unit: 'percent', value }, at(i))),
        event('performance', { service: 'web', metric: 'latency', unit: 'ms', value: 5.5 }, at(3)),
        event('performance', { metric: 'latency', value: -2 }, at(3)),
      ])
      await ingestAll(t, other.project, [event('performance', { service: 'api', metric: 'latency', unit: 'ms', value: 9999 }, at(1))])
    })
    after(() => t.close())

    test('summarises count, min, max, avg and nearest-rank percentiles per service, metric and unit', async () => {
      const body = await read(t, `/api/modules/performance/summary?project_id=${project.id}`)
      const byKey = Object.fromEntries(body.data.map((row: any) => [`${row.service}/${row.metric}/${row.unit}`, row]))
      assert.deepEqual(Object.keys(byKey).sort(), ['api/cpu/percent', 'api/latency/ms', 'null/latency/null', 'web/latency/ms'])
      assert.deepEqual(byKey['api/latency/ms'], { service: 'api', metric: 'latency', unit: 'ms', count: 100, min: 1, max: 100, avg: 50.5, p50: 50, p95: 95, p99: 99 })
      assert.deepEqual(byKey['api/cpu/percent'], { service: 'api', metric: 'cpu', unit: 'percent', count: 3, min: 10, max: 30, avg: 20, p50: 20, p95: 30, p99: 30 })
      assert.deepEqual(byKey['web/latency/ms'], { service: 'web', metric: 'latency', unit: 'ms', count: 1, min: 5.5, max: 5.5, avg: 5.5, p50: 5.5, p95: 5.5, p99: 5.5 })
      assert.equal(byKey['null/latency/null'].p99, -2)
    })

    test('narrows the summary by time range, service and metric', async () => {
      const body = await read(t, `/api/modules/performance/summary?project_id=${project.id}&service=api&metric=latency&from=${at(10)}&to=${at(20)}`)
      assert.deepEqual(body.data, [{ service: 'api', metric: 'latency', unit: 'ms', count: 10, min: 11, max: 20, avg: 15.5, p50: 15, p95: 20, p99: 20 }])
      const none = await read(t, `/api/modules/performance/summary?project_id=${project.id}&metric=nothing`)
      assert.deepEqual(none.data, [])
    })

    test('repeated values count once per occurrence at their ranks', async () => {
      const repeated = await createProject(t, 'repeated values')
      await ingestAll(t, repeated, [5, 9, 5, 7, 5, 7].map((value, i) => event('performance', { service: 'api', metric: 'latency', unit: 'ms', value }, at(i))))
      const body = await read(t, `/api/modules/performance/summary?project_id=${repeated.id}&from=${at(0)}&to=${at(6)}`)
      assert.deepEqual(body.data, [{ service: 'api', metric: 'latency', unit: 'ms', count: 6, min: 5, max: 9, avg: 6.333333, p50: 5, p95: 9, p99: 9 }])
      const firstFour = await read(t, `/api/modules/performance/summary?project_id=${repeated.id}&from=${at(0)}&to=${at(4)}`)
      assert.deepEqual(firstFour.data, [{ service: 'api', metric: 'latency', unit: 'ms', count: 4, min: 5, max: 9, avg: 6.5, p50: 5, p95: 9, p99: 9 }])
    })

    test('a time series in hour buckets, oldest first, with the same statistics per bucket', async () => {
      const body = await read(t, `/api/modules/performance/series?project_id=${project.id}&metric=latency&service=api&from=${HOUR_START}&to=${at(180)}&bucket=1h`)
      assert.equal(body.bucket, '1h')
      assert.deepEqual(body.data, [
        { start: HOUR_START, count: 60, min: 1, max: 60, avg: 30.5, p50: 30, p95: 57, p99: 60 },
        { start: at(60), count: 40, min: 61, max: 100, avg: 80.5, p50: 80, p95: 98, p99: 100 },
      ])
    })

    test('without a bucket, picks the narrowest that keeps the series short', async () => {
      const body = await read(t, `/api/modules/performance/series?project_id=${project.id}&metric=latency&service=api&from=${HOUR_START}&to=${at(120)}`)
      assert.equal(body.bucket, '1m')
      assert.equal(body.data.length, 100)
      const day = await read(t, `/api/modules/performance/series?project_id=${project.id}&metric=latency&to=${at(120)}`)
      assert.equal(day.bucket, '15m')
      assert.equal(day.from, new Date(Date.parse(at(120)) - 86_400_000).toISOString())
    })

    test('bad parameters are named; other organisations get 404', async () => {
      assert.match((await read(t, `/api/modules/performance/series?project_id=${project.id}`, 400)).detail, /query\.metric/)
      assert.match((await read(t, `/api/modules/performance/series?project_id=${project.id}&metric=latency&bucket=2m`, 400)).detail, /query\.bucket/)
      const tooMany = await read(t, `/api/modules/performance/series?project_id=${project.id}&metric=latency&bucket=1m&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z`, 400)
      assert.match(tooMany.detail, /query\.bucket/)
      assert.match((await read(t, `/api/modules/performance/series?project_id=${project.id}&metric=latency&from=${at(10)}&to=${at(5)}`, 400)).detail, /query\.from/)
      assert.match((await read(t, `/api/modules/performance/summary?project_id=${project.id}&percentile=90`, 400)).detail, /query\.percentile/)
      await read(t, `/api/modules/performance/summary?project_id=${project.id}`, 404, other.token)
    })
  })
}
