import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, ingest, type TestPortal, type TestProject } from './support/portal.ts'
import { captured, groupOf, listGroups, startErrorsPortal } from './errors/support.ts'

// The reads that link signals to each other (issue 20, point 1) and the bucketed counts over time (point 2).

const TRACE = '0af7651916cd43dd8448eb211c80319c'
const OTHER_TRACE = 'b7ad6b7169203331b7ad6b7169203331'
const HOUR = 3_600_000

async function ingested(t: TestPortal, project: TestProject, events: unknown[]) {
  const answer = await ingest(t, project, events)
  assert.equal(answer.status, 200, answer.text)
  assert.deepEqual(answer.body.rejected, [])
}

async function read(t: TestPortal, path: string) {
  const answer = await t.request('GET', path, { token: t.viewerToken })
  assert.equal(answer.status, 200, `${path}: ${answer.text}`)
  return answer.body
}

for (const dialect of DIALECTS) {
  describe(`links between signals on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    // Two whole hours ago and a bit, so that histograms cover whole and partial hours.
    const base = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR
    const at = (ms: number) => new Date(base + ms).toISOString()
    before(async () => {
      t = await startErrorsPortal(dialect)
      project = await createProject(t, 'links')
    })
    after(() => t?.close())

    test('error occurrences of a trace, across groups, with their groups; the occurrence names its trace and span', async () => {
      const first = await captured(t, project, { name: 'TypeError', message: 'total of undefined', traceId: TRACE, spanId: 'span-1', timestamp: at(10) })
      const second = await captured(t, project, { name: 'RangeError', message: 'bad page', traceId: TRACE, timestamp: at(20) })
      await captured(t, project, { name: 'TypeError', message: 'total of undefined', traceId: OTHER_TRACE, timestamp: at(30) })
      // An ingested error event (as OTLP and Sentry intake write them) links the same way.
      await ingested(t, project, [event('error', { name: 'KeyError', message: "'sku'", traceId: TRACE, spanId: 'span-9' }, at(40))])

      const page = await read(t, `/api/errors/occurrences?project_id=${project.id}&trace_id=${TRACE}`)
      assert.deepEqual(
        page.data.map((occurrence: any) => [occurrence.name, occurrence.traceId, occurrence.spanId]),
        [
          ['KeyError', TRACE, 'span-9'],
          ['RangeError', TRACE, null],
          ['TypeError', TRACE, 'span-1'],
        ],
      )
      assert.equal(page.data[2].groupFingerprint, first.groupFingerprint)
      assert.equal(page.data[1].groupFingerprint, second.groupFingerprint)
      assert.equal(page.data[2].groupStatus, 'unresolved')

      const paged = await read(t, `/api/errors/occurrences?project_id=${project.id}&trace_id=${TRACE}&limit=2`)
      assert.equal(paged.data.length, 2)
      const rest = await read(t, `/api/errors/occurrences?project_id=${project.id}&trace_id=${TRACE}&limit=2&cursor=${encodeURIComponent(paged.nextCursor)}`)
      assert.deepEqual(rest.data.map((occurrence: any) => occurrence.name), ['TypeError'])
      assert.equal(rest.nextCursor, null)

      const detail = await groupOf(t, first.groupFingerprint)
      assert.equal(detail.occurrences[0].traceId, OTHER_TRACE)
      assert.equal(detail.occurrences[1].traceId, TRACE)

      const other = await createProject(t, 'other')
      const elsewhere = await read(t, `/api/errors/occurrences?project_id=${other.id}&trace_id=${TRACE}`)
      assert.deepEqual(elsewhere.data, [])
      const missing = await t.request('GET', `/api/errors/occurrences?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(missing.status, 400)
      assert.match(missing.body.detail, /trace_id/)
    })

    test('logs of a trace by trace_id, within a window around it', async () => {
      await ingested(t, project, [
        event('log', { level: 'info', message: 'charge started', traceId: TRACE }, at(5)),
        event('log', { level: 'error', message: 'charge failed', traceId: TRACE }, at(15)),
        event('log', { level: 'info', message: 'someone else', traceId: OTHER_TRACE }, at(25)),
        event('log', { level: 'info', message: 'no trace' }, at(35)),
      ])
      const logs = await read(t, `/api/modules/logs/events?project_id=${project.id}&trace_id=${TRACE}&from=${at(0)}&to=${at(60_000)}`)
      assert.deepEqual(logs.data.map((log: any) => log.data.message), ['charge failed', 'charge started'])
    })

    test('groups first seen in a release, deploys of a release, and groups seen within a period', async () => {
      const introduced = await captured(t, project, { name: 'PaymentError', message: 'declined', release: 'shop@2.0.0', timestamp: at(HOUR + 1000) })
      // Seen first in 1.9.0, then again in 2.0.0: not introduced by 2.0.0.
      await captured(t, project, { name: 'OldError', message: 'old', release: 'shop@1.9.0', timestamp: at(1000) })
      await captured(t, project, { name: 'OldError', message: 'old', release: 'shop@2.0.0', timestamp: at(HOUR + 2000) })

      const firstSeen = await listGroups(t, project, '&first_release=shop%402.0.0')
      assert.deepEqual(firstSeen.data.map((group: any) => group.fingerprint), [introduced.groupFingerprint])
      const inRelease = await listGroups(t, project, '&release=shop%402.0.0')
      assert.equal(inRelease.data.length, 2)

      const inPeriod = await listGroups(t, project, `&from=${encodeURIComponent(at(HOUR))}`)
      assert.ok(inPeriod.data.some((group: any) => group.name === 'PaymentError'))
      assert.ok(!inPeriod.data.some((group: any) => group.name === 'RangeError'), 'a group last seen before `from` is left out')

      const detail = await groupOf(t, introduced.groupFingerprint)
      assert.deepEqual(detail.breakdown.release.map((tag: any) => [tag.value, tag.count]), [['shop@2.0.0', 1]])
      const old = await groupOf(t, (await listGroups(t, project, '&q=OldError')).data[0].fingerprint)
      assert.deepEqual(old.breakdown.release.map((tag: any) => [tag.value, tag.count]), [['shop@1.9.0', 1], ['shop@2.0.0', 1]])

      await ingested(t, project, [
        event('deploy', { service: 'api', version: '2.0.0', release: 'shop@2.0.0', status: 'succeeded' }, at(HOUR)),
        event('deploy', { service: 'web', version: 'shop@2.0.0', status: 'succeeded' }, at(HOUR + 10)),
        event('deploy', { service: 'api', version: '1.9.0', release: 'shop@1.9.0', status: 'succeeded' }, at(0)),
      ])
      const deploys = await read(t, `/api/modules/deploys/events?project_id=${project.id}&release=shop%402.0.0`)
      assert.deepEqual(deploys.data.map((deploy: any) => deploy.data.service), ['web', 'api'])
    })

    test('log volume per level per bucket: minute buckets from the logs, hour buckets from the hourly counts, both cut to the window', async () => {
      const histogramProject = await createProject(t, 'histogram')
      await ingested(t, histogramProject, [
        event('log', { level: 'info', message: 'a' }, at(30 * 60_000)),
        event('log', { level: 'info', message: 'b' }, at(30 * 60_000 + 5)),
        event('log', { level: 'error', message: 'c' }, at(90 * 60_000)),
        event('log', { message: 'no level' }, at(91 * 60_000)),
        event('log', { level: 'warn', message: 'outside' }, at(150 * 60_000)),
      ])
      const query = (from: number, to: number, bucket: number) =>
        `/api/modules/logs/histogram?project_id=${histogramProject.id}&from=${encodeURIComponent(at(from))}&to=${encodeURIComponent(at(to))}&bucket_seconds=${bucket}`
      // Whole hours: [0, 2 h) in two hour buckets.
      const hours = await read(t, query(0, 2 * HOUR, 3600))
      assert.deepEqual(
        hours.data.map((bucket: any) => [bucket.start, bucket.total, Object.fromEntries(bucket.levels.map((row: any) => [row.level ?? 'null', row.count]))]),
        [
          [at(0), 2, { info: 2 }],
          [at(HOUR), 2, { error: 1, null: 1 }],
        ],
      )
      assert.equal(hours.total, 4)
      // A window cut mid-hour: only the logs inside it, each in its bucket.
      const cut = await read(t, query(31 * 60_000, 91 * 60_000, 3600))
      assert.deepEqual(cut.data.map((bucket: any) => bucket.total), [0, 1])
      const minutes = await read(t, query(29 * 60_000, 32 * 60_000, 60))
      assert.deepEqual(minutes.data.map((bucket: any) => bucket.total), [0, 2, 0])

      const wide = await t.request('GET', query(0, 30 * 24 * HOUR, 60), { token: t.viewerToken })
      assert.equal(wide.status, 400)
      assert.match(wide.body.detail, /bucket_seconds/)
      const backwards = await t.request('GET', query(HOUR, 0, 60), { token: t.viewerToken })
      assert.equal(backwards.status, 400)
    })

    test('error occurrences per bucket over a window', async () => {
      const errorsProject = await createProject(t, 'error histogram')
      for (const offset of [5 * 60_000, 6 * 60_000, 70 * 60_000]) await captured(t, errorsProject, { name: 'E', message: 'm', timestamp: at(offset) })
      const histogram = await read(
        t,
        `/api/errors/histogram?project_id=${errorsProject.id}&from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(2 * HOUR))}&bucket_seconds=3600`,
      )
      assert.deepEqual(histogram.data, [
        { start: at(0), count: 2 },
        { start: at(HOUR), count: 1 },
      ])
      assert.equal(histogram.total, 3)
    })
  })
}
