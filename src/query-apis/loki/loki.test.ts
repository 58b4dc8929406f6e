import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createProject, DIALECTS, event, type TestPortal, type TestProject } from '../../../test/support/portal.ts'
import { ingestAll, otherOrganisation, startReadsPortal } from '../../../test/support/module-reads.ts'

const BASE = Date.parse('2026-03-15T00:00:00.000Z')
const iso = (minutes: number) => new Date(BASE + minutes * 60_000).toISOString()
const ns = (minutes: number) => `${(BASE + minutes * 60_000) * 1_000_000}`

for (const dialect of DIALECTS) {
  describe(`Loki query API on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let other: { token: string; project: TestProject }
    const loki = async (path: string, params: Record<string, string | string[]>, options: { status?: number; tenant?: string | null; token?: string } = {}) => {
      const search = new URLSearchParams()
      for (const [name, value] of Object.entries(params)) for (const item of [value].flat()) search.append(name, item)
      const headers: Record<string, string> = {}
      const tenant = options.tenant === undefined ? project.id : options.tenant
      if (tenant !== null) headers['x-scope-orgid'] = tenant
      const response = await t.request('GET', `/loki/api/v1/${path}?${search}`, { token: options.token ?? t.viewerToken, headers })
      assert.equal(response.status, options.status ?? 200, `${path} ${JSON.stringify(params)}: ${response.text}`)
      return response
    }
    const range = { start: ns(0), end: ns(600) }

    before(async () => {
      t = await startReadsPortal(dialect)
      project = await createProject(t, 'shop')
      other = await otherOrganisation(t)
      await ingestAll(t, project, [
        event('log', { level: 'info', module: 'http', message: 'GET /cart 200 took 12ms', serviceName: 'checkout' }, iso(1)),
        event('log', { level: 'error', module: 'billing', message: '{"msg":"card declined","status":502,"user":{"id":"u1"}}', serviceName: 'checkout' }, iso(2)),
        event('log', { level: 'error', module: 'billing', message: '{"msg":"timeout","status":504,"user":{"id":"u2"}}', serviceName: 'checkout' }, iso(3)),
        event('log', { level: 'warn', module: 'http', message: 'method=POST path=/pay status=429 duration=1.5s', fields: { requestId: 'r-9' } }, iso(4)),
        event('log', { level: 'info', module: 'http', message: 'method=GET path=/cart status=200 duration=20ms' }, iso(5)),
        event('log', { level: 'info', module: 'http', message: 'Timeout ignored' }, iso(61)),
        // on the hour exactly: the hourly counts hold it in [2:00, 3:00), a window (t − 1h, t] at t = 2:00
        event('log', { level: 'error', module: 'billing', message: 'on the hour' }, iso(120)),
        event('log', { message: 'no level, no module' }, iso(150)),
      ])
      await ingestAll(t, other.project, [event('log', { level: 'error', module: 'billing', message: 'other organisation' }, iso(2))])
    })
    after(() => t.close())

    test('a log query returns the newest lines its selector and line filters keep, grouped into streams', async () => {
      const body = (await loki('query_range', { query: '{module="billing"} |= "status"', ...range })).body
      assert.equal(body.status, 'success')
      assert.equal(body.data.resultType, 'streams')
      assert.deepEqual(body.data.result, [
        {
          stream: { level: 'error', module: 'billing', service_name: 'checkout' },
          values: [
            [ns(3), '{"msg":"timeout","status":504,"user":{"id":"u2"}}'],
            [ns(2), '{"msg":"card declined","status":502,"user":{"id":"u1"}}'],
          ],
        },
      ])
      assert.equal(body.data.stats.summary.totalEntriesReturned, 2)
      // |= is case-sensitive even where the database's search is not; !~ and |~ are regular expressions
      const exact = (await loki('query_range', { query: '{module="http"} |= "Timeout"', ...range })).body
      assert.deepEqual(exact.data.result.flatMap((stream: any) => stream.values.map((value: any) => value[1])), ['Timeout ignored'])
      const regex = (await loki('query_range', { query: '{level=~"info|warn"} |~ "status=(2|4)\\\\d\\\\d" != "POST"', ...range })).body
      assert.deepEqual(regex.data.result.flatMap((stream: any) => stream.values.map((value: any) => value[1])), ['method=GET path=/cart status=200 duration=20ms'])
      const oldestFirst = (await loki('query_range', { query: '{module=~".+"}', ...range, direction: 'forward', limit: '2' })).body
      assert.deepEqual(
        oldestFirst.data.result.map((stream: any) => [stream.stream.module, stream.values.map((value: any) => value[0])]),
        [['billing', [ns(2)]], ['http', [ns(1)]]],
      )
    })

    test('a long range is read in windows without losing or reordering a line at their edges', async () => {
      // 300 logs, three to a minute, two modules, over 128 minutes: the range's windows (a 64th of it, 2 minutes,
      // then four times wider each) start on whole minutes, at logs, and batches within a window cut through minutes.
      const spread = await createProject(t, 'spread')
      const logs = Array.from({ length: 300 }, (_, i) => ({ minute: Math.floor(i / 3), i }))
      await ingestAll(t, spread, logs.map(({ minute, i }) => event('log', { level: 'info', module: i % 2 ? 'odd' : 'even', message: `line ${i}${i % 7 === 0 ? ' sevens' : ''}` }, iso(minute))))
      const lines = async (query: string, params: Record<string, string>) => {
        const body = (await loki('query_range', { query, start: ns(0), end: ns(128), ...params }, { tenant: spread.id })).body
        return body.data.result.flatMap((stream: any) => stream.values).sort((a: any, b: any) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((value: any) => value[1])
      }
      const all = logs.map(({ i }) => `line ${i}${i % 7 === 0 ? ' sevens' : ''}`)
      const sorted = (values: string[]) => [...values].sort()
      assert.deepEqual(sorted(await lines('{module=~".+"}', { limit: '250' })), sorted(all.slice(-250)))
      assert.deepEqual(sorted(await lines('{module=~".+"}', { limit: '250', direction: 'forward' })), sorted(all.slice(0, 250)))
      assert.deepEqual(sorted(await lines('{module="odd"} |= "sevens"', { limit: '1000' })), sorted(all.filter((_, i) => i % 2 === 1 && i % 7 === 0)))
      assert.deepEqual(sorted(await lines('{module="even"} |= "sevens"', { limit: '5' })), sorted(all.filter((_, i) => i % 2 === 0 && i % 7 === 0).slice(-5)))
    })

    test('json and logfmt parsers feed label filters and line_format', async () => {
      const json = (await loki('query_range', { query: '{service_name="checkout"} | json | status >= 503 | line_format "{{.msg}} for {{.user_id}}"', ...range })).body
      assert.deepEqual(json.data.result, [
        { stream: { level: 'error', module: 'billing', service_name: 'checkout', msg: 'timeout', status: '504', user_id: 'u2' }, values: [[ns(3), 'timeout for u2']] },
      ])
      const logfmt = (await loki('query_range', { query: '{module="http"} | logfmt | duration > 1s or status="200"', ...range })).body
      assert.deepEqual(
        logfmt.data.result.map((stream: any) => [stream.stream.method, stream.stream.duration]),
        // streams in Prometheus' order of label sets (by sorted names, then values: duration first), descending for a backward query as Loki lists them
        [['GET', '20ms'], ['POST', '1.5s']],
      )
      // the log's fields are structured metadata: label filters see them without a parser
      const metadata = (await loki('query_range', { query: '{module="http"} | requestId="r-9"', ...range })).body
      assert.deepEqual(metadata.data.result.map((stream: any) => stream.values.length), [1])
    })

    test('metric queries count per step, the same from the hourly counts as from the logs', async () => {
      const params = { start: ns(60), end: ns(240), step: '3600' }
      const hourly = (await loki('query_range', { query: 'sum by (level) (count_over_time({level=~".+"}[1h]))', ...params })).body
      assert.equal(hourly.data.resultType, 'matrix')
      const seconds = (minutes: number) => (BASE + minutes * 60_000) / 1000
      assert.deepEqual(hourly.data.result, [
        { metric: { level: 'error' }, values: [[seconds(60), '2'], [seconds(120), '1']] },
        { metric: { level: 'info' }, values: [[seconds(60), '2'], [seconds(120), '1']] },
        { metric: { level: 'warn' }, values: [[seconds(60), '1']] },
      ])
      // a line filter that keeps every line makes the portal read the logs themselves
      const scanned = (await loki('query_range', { query: 'sum by (level) (count_over_time({level=~".+"} |= "" [1h]))', ...params })).body
      assert.deepEqual(scanned.data.result, hourly.data.result)
      // start and end are aligned to the step (start down, end up), as Loki's query frontend does
      const aligned = (await loki('query_range', { query: 'sum by (level) (count_over_time({level=~".+"}[1h]))', start: ns(61), end: ns(179), step: '3600' })).body
      assert.deepEqual(aligned.data.result, hourly.data.result)
      const rate = (await loki('query_range', { query: 'sum(rate({module="billing"}[1h]))', start: ns(60), end: ns(60), step: '60' })).body
      assert.deepEqual(rate.data.result, [{ metric: {}, values: [[seconds(60), String(2 / 3600)]] }])
      const bytes = (await loki('query_range', { query: 'bytes_over_time({module="http", level="warn"}[10m])', start: ns(10), end: ns(10), step: '60' })).body
      assert.deepEqual(bytes.data.result[0].values, [[seconds(10), String(Buffer.byteLength('method=POST path=/pay status=429 duration=1.5s'))]])
      const top = (await loki('query', { query: 'topk(1, sum by (module) (count_over_time({level=~".+"}[1h])))', time: ns(60) })).body
      assert.deepEqual(top.data.result, [{ metric: { module: 'http' }, value: [seconds(60), '3'] }])
    })

    test('answers Grafana’s health check and refuses a log query at an instant', async () => {
      const health = (await loki('query', { query: 'vector(1)+vector(1)', time: '1700000000' })).body
      assert.deepEqual(health.data.result, [{ metric: {}, value: [1700000000, '2'] }])
      const refused = await loki('query', { query: '{module="http"}' }, { status: 400 })
      assert.match(refused.text, /range query/)
    })

    test('lists labels, their values, series and index stats', async () => {
      assert.deepEqual((await loki('labels', range)).body.data, ['level', 'module', 'service_name'])
      assert.deepEqual((await loki('label/level/values', range)).body.data, ['error', 'info', 'warn'])
      assert.deepEqual((await loki('label/module/values', { ...range, query: '{level="error"}' })).body.data, ['billing'])
      assert.deepEqual((await loki('label/nothing/values', range)).body.data, [])
      const series = (await loki('series', { ...range, 'match[]': ['{module="billing"}', '{level="warn"}'] })).body
      assert.deepEqual(series.data, [
        { level: 'error', module: 'billing' },
        { level: 'error', module: 'billing', service_name: 'checkout' },
        { level: 'warn', module: 'http' },
      ])
      const stats = (await loki('index/stats', { ...range, query: '{module="billing"}' })).body
      assert.deepEqual({ streams: stats.streams, entries: stats.entries }, { streams: 2, entries: 3 })
      assert.equal((await loki('status/buildinfo', {})).body.version, '2.8.0')
    })

    test('refuses what it does not evaluate with Loki’s plain-text error naming the construct', async () => {
      for (const [query, named] of [
        ['sum(rate({module="http"} | unwrap latency [1m]))', /unwrap|syntax error/],
        ['{module="http"} | label_format x=y', /label_format/],
        ['{module="http"} | line_format "{{ .msg | ToUpper }}"', /line_format action/],
        ['{module=~".*"}', /at least one regexp or equality matcher/],
        ['{module="http"', /parse error/],
      ] as const) {
        const refused = await loki('query_range', { query, ...range }, { status: 400 })
        assert.match(refused.headers.get('content-type') ?? '', /^text\/plain/)
        assert.match(refused.text, named, query)
      }
      const badStep = await loki('query_range', { query: 'count_over_time({module="http"}[1m])', ...range, step: '0.001' }, { status: 400 })
      assert.match(badStep.text, /maximum resolution/)
    })

    test('the tenant is a project of the token’s organisation, named by X-Scope-OrgID or project_id', async () => {
      const missing = await loki('labels', range, { status: 400, tenant: null })
      assert.match(missing.text, /X-Scope-OrgID/)
      const byParameter = (await loki('labels', { ...range, project_id: project.id }, { tenant: null })).body
      assert.deepEqual(byParameter.data, ['level', 'module', 'service_name'])
      // another organisation's project is answered as absent, from either side
      await loki('labels', range, { status: 404, tenant: other.project.id })
      await loki('query_range', { query: '{module="billing"}', ...range }, { status: 404, token: other.token })
      const own = (await loki('query_range', { query: '{module="billing"}', ...range }, { tenant: other.project.id, token: other.token })).body
      assert.deepEqual(own.data.result.flatMap((stream: any) => stream.values.map((value: any) => value[1])), ['other organisation'])
      // API keys write; they never read
      const byKey = await t.request('GET', `/loki/api/v1/labels`, { token: project.key, headers: { 'x-scope-orgid': project.id } })
      assert.equal(byKey.status, 403)
    })
  })
}
