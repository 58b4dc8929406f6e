import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, ingest, startTestPortal, type TestPortal, type TestProject } from '../../test/support/portal.ts'
import { backtest } from './backtest.ts'
import { createMinuteCounts, SETTLE_MS, type MinuteCounts, type StoredCounts } from './minute-counts.ts'
import { normalizeRule, signalOf } from './rules.ts'
import type { SeriesValue } from './signal.ts'
import { moduleDb } from '../modules/read-route.ts'
import type { LogTables } from '../modules/logs/tables.ts'

const MINUTE_MS = 60_000
// shares that differ (1/2, 1/3, 1/6), so that a count of one level never equals another's
const LEVELS = ['info', 'warn', 'warn', 'error', 'info', 'info']

/** Logs at the given times, with levels, modules and messages that differ, sent through ingest. */
async function logsAt(t: TestPortal, project: TestProject, times: number[]) {
  const events = times.map((ts, i) => event('log', { level: LEVELS[i % LEVELS.length], module: `m${i % 2}`, message: i % 4 === 0 ? `Payment FAILED ${i}` : `ok ${i}` }, new Date(ts).toISOString()))
  for (let first = 0; first < events.length; first += 500) assert.equal((await ingest(t, project, events.slice(first, first + 500))).status, 200)
}

const spread = (from: number, to: number, count: number) => Array.from({ length: count }, (_, i) => Math.floor(from + ((to - from) * (i + 0.5)) / count))
const sorted = (values: SeriesValue[]) => [...values].sort((a, b) => (a.series < b.series ? -1 : 1))

interface CountQuery {
  filters: Record<string, string>
  by: string | undefined
}

const QUERIES: CountQuery[] = [
  { filters: {}, by: undefined },
  { filters: { level: 'error' }, by: undefined },
  { filters: { q: 'payment failed' }, by: undefined },
  { filters: { module: 'm1' }, by: 'level' },
  { filters: {}, by: 'module' },
]
const WINDOWS_S = [300, 1_030, 3_600]

test('with a read-ahead range, the first window keeps the whole range in one read and the windows after it read nothing', async () => {
  const now = Date.UTC(2026, 0, 1, 12)
  const times = spread(now - 7_200_000, now, 500)
  const reads: string[] = []
  const stored: StoredCounts = {
    async range(fromMs, toMs) {
      reads.push('range')
      return [{ series: '', value: times.filter((ts) => ts >= fromMs && ts < toMs).length }]
    },
    async perMinute(fromMs, toMs) {
      reads.push('perMinute')
      const minutes = new Map<number, number>()
      for (const ts of times) if (ts >= fromMs && ts < toMs) minutes.set(ts - (ts % MINUTE_MS), (minutes.get(ts - (ts % MINUTE_MS)) ?? 0) + 1)
      return [...minutes].map(([minute, value]) => ({ minute, series: '', value }))
    },
  }
  const counts = createMinuteCounts(10_000, { fromMs: now - 7_200_000, toMs: now })
  const query = { projectId: 'p', filters: {}, aggregate: 'count', by: undefined }
  for (let at = now - 3_600_000; at < now - SETTLE_MS - 600_000; at += 300_000) {
    const value = await counts.count({ signal: 'logs.count', now }, 'log_events', { ...query, fromMs: at - 600_000, toMs: at }, stored)
    assert.deepEqual(value, [{ series: '', value: times.filter((ts) => ts >= at - 600_000 && ts < at).length }])
  }
  assert.deepEqual(reads, ['perMinute'])
})

for (const dialect of DIALECTS) {
  describe(`kept minute counts on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startTestPortal(dialect)
    })
    after(() => t.close())

    /** logs.count over the window ending at `at`, read through `counts` as an evaluation at `at` reads it, and recounted from the logs. */
    async function bothWays(project: TestProject, counts: MinuteCounts, at: number, windowS: number, query: CountQuery) {
      const signal = signalOf({ signal: 'logs.count' })
      const asked = { projectId: project.id, fromMs: at - windowS * 1000, toMs: at, aggregate: 'count', ...query }
      const kept = await signal.evaluate(t.portal.ctx, { ...asked, kept: { counts, scope: { signal: signal.name, now: at } } })
      const recounted = await signal.evaluate(t.portal.ctx, asked)
      return { kept: sorted(kept), recounted: sorted(recounted) }
    }

    test('an evaluation from kept counts equals a recount of the window, evaluation after evaluation with logs arriving between', async () => {
      const project = await createProject(t)
      const counts = createMinuteCounts()
      // evaluation times in the past, 23.5 s into a minute, so that windows start and end within minutes
      let at = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS + 23_500
      await logsAt(t, project, spread(at - 3_700_000, at, 600))
      for (let evaluation = 0; evaluation < 4; evaluation++) {
        for (const windowS of WINDOWS_S) {
          for (const query of QUERIES) {
            const { kept, recounted } = await bothWays(project, counts, at, windowS, query)
            assert.deepEqual(kept, recounted, `evaluation ${evaluation}, window ${windowS} s, ${JSON.stringify(query)}`)
          }
        }
        // logs arriving before the next evaluation, none later than the settle delay after its time
        const next = at + 3 * MINUTE_MS + 7_000
        await logsAt(t, project, spread(at - SETTLE_MS + 1_000, next, 90))
        at = next
      }
      assert.ok(counts.size > 0, 'minutes were kept')
    })

    test('rules that differ by filters or by dimension do not share kept counts', async () => {
      const project = await createProject(t)
      const counts = createMinuteCounts()
      const at = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS + 41_000
      await logsAt(t, project, spread(at - 1_800_000, at, 300))
      const values = []
      for (const query of [{ filters: { level: 'error' }, by: undefined }, { filters: { level: 'warn' }, by: undefined }, { filters: {}, by: 'level' }, { filters: {}, by: 'module' }] as CountQuery[]) {
        const { kept, recounted } = await bothWays(project, counts, at, 1_800, query)
        assert.deepEqual(kept, recounted, JSON.stringify(query))
        values.push(kept)
      }
      assert.deepEqual(values[0], [{ series: '', value: 50 }])
      assert.deepEqual(values[1], [{ series: '', value: 100 }])
      assert.deepEqual(values[2].map((row) => row.series), ['error', 'info', 'warn'])
      assert.deepEqual(values[3].map((row) => row.series), ['m0', 'm1'])
    })

    test('kept counts stay within their bound, and a window that does not fit is counted from the logs', async () => {
      const project = await createProject(t)
      const bound = 150
      const counts = createMinuteCounts(bound)
      const at = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS + 5_000
      await logsAt(t, project, spread(at - 3_700_000, at, 400))
      const asked: [number, CountQuery][] = [
        [1_800, { filters: {}, by: undefined }],
        [1_800, { filters: { level: 'info' }, by: undefined }],
        [1_800, { filters: {}, by: 'level' }],
        [3_600, { filters: {}, by: 'module' }],
        [600, { filters: { module: 'm0' }, by: undefined }],
      ]
      for (const [windowS, query] of asked) {
        const { kept, recounted } = await bothWays(project, counts, at, windowS, query)
        assert.deepEqual(kept, recounted, `${windowS} s ${JSON.stringify(query)}`)
        assert.ok(counts.size <= bound, `${counts.size} counts kept, over the bound of ${bound}`)
      }
      assert.ok(counts.size > 0, 'minutes were kept')
    })

    test('a backtest reads its counts ahead, and each window it replays equals a recount of that window', async () => {
      const project = await createProject(t)
      const now = Date.now()
      // up to a second ago: the last windows hold minutes not settled yet
      await logsAt(t, project, spread(now - 3 * 3_600_000, now - 1_000, 900))
      const signal = signalOf({ signal: 'logs.count' })
      // 1,030 s: windows that start within a minute
      for (const [windowSeconds, query] of [[300, { filters: {}, by: 'level' }], [1_030, { filters: { q: 'payment failed' }, by: undefined }]] as [number, CountQuery][]) {
        const rule = { ...normalizeRule({ name: 'bt', signal: 'logs.count', filters: query.filters, by: query.by, windowSeconds, intervalSeconds: 60, condition: { op: 'above', critical: 1e9 } }, 'rule'), id: 'r', projectId: project.id, createdAt: now, updatedAt: now, evaluatedThrough: 0 }
        const result = await backtest(t.portal.ctx, rule, '24h', now)
        assert.ok(result.series.length > 0)
        for (const { series, points } of result.series) {
          for (const { at, value } of points.filter((point) => point.at > now - 3.5 * 3_600_000)) {
            const recounted = await signal.evaluate(t.portal.ctx, { projectId: project.id, fromMs: at - windowSeconds * 1000, toMs: at, aggregate: 'count', ...query })
            assert.equal(value, recounted.find((row) => row.series === series)?.value ?? 0, `window ${windowSeconds} s ending ${new Date(at).toISOString()}, series ${series}`)
          }
        }
      }
    })

    test('a count by level reads its whole minutes from the level counts, and those before they began from the logs', async () => {
      const project = await createProject(t)
      const at = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS + 17_000
      await logsAt(t, project, spread(at - 3_600_000, at, 600))
      // as an upgrade leaves a project that had logs: no minute counts before `since`
      const since = at - 25 * MINUTE_MS - 17_000
      const db = moduleDb<LogTables>(t.portal.ctx)
      await db.deleteFrom('log_level_minutes').where('project_id', '=', project.id).where('ts', '<', since).execute()
      await db.insertInto('log_level_minutes_since').values({ project_id: project.id, since }).execute()
      for (const query of [{ filters: { level: 'error' }, by: undefined }, { filters: {}, by: 'level' }, { filters: {}, by: undefined }] as CountQuery[]) {
        for (const windowS of [600, 3_000]) {
          const { kept, recounted } = await bothWays(project, createMinuteCounts(), at, windowS, query)
          assert.deepEqual(kept, recounted, `window ${windowS} s, ${JSON.stringify(query)}`)
        }
      }
      // a count the level counts hold and the logs do not: read from the counts
      await db.insertInto('log_level_minutes').values({ project_id: project.id, ts: at - 17_000 - 5 * MINUTE_MS, level_key: '"error"', shard: 99, level: 'error', events: 1_000 }).execute()
      const { kept, recounted } = await bothWays(project, createMinuteCounts(), at, 600, { filters: { level: 'error' }, by: undefined })
      assert.equal(kept[0].value, recounted[0].value + 1_000)
    })

    test('a log arriving later than the settle delay into a kept minute is not counted from the kept counts', async () => {
      const project = await createProject(t)
      const counts = createMinuteCounts()
      const at = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS + 30_000
      await logsAt(t, project, spread(at - 600_000, at, 60))
      const first = await bothWays(project, counts, at, 600, { filters: {}, by: undefined })
      assert.deepEqual(first.kept, [{ series: '', value: 60 }])
      await logsAt(t, project, [at - 300_000])
      const later = at + 10_000
      const second = await bothWays(project, counts, later, 610, { filters: {}, by: undefined })
      assert.deepEqual(second.recounted, [{ series: '', value: 61 }])
      assert.deepEqual(second.kept, [{ series: '', value: 60 }])
    })
  })
}
