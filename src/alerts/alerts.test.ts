import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { createProject, DIALECTS, event, ingest, readAll, startTestPortal, type TestPortal, type TestProject } from '../../test/support/portal.ts'
import { createEndpoint } from '../../test/webhooks/api.ts'
import { modules } from '../modules/registry.ts'
import { eventually, startReceiver, verifyCall, type Receiver } from '../../test/webhooks/receiver.ts'

const WEBHOOKS = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_SCHEDULE: '0.1', PUBLIC_URL: 'https://observe.example.com' }

const errorLogsRule = (projectId: string, endpointIds: string[], extra: Record<string, unknown> = {}) => ({
  projectId,
  name: 'error logs',
  signal: 'logs.count',
  filters: { level: 'error' },
  windowSeconds: 300,
  intervalSeconds: 3600,
  condition: { op: 'above', critical: 2 },
  targets: { endpointIds },
  ...extra,
})

const errorLogs = (count: number, ts?: string) => Array.from({ length: count }, (_, i) => event('log', { message: `payment failed ${i}`, level: 'error' }, ts))

for (const dialect of DIALECTS) {
  describe(`alert rules on ${dialect}`, () => {
    let t: TestPortal
    let receiver: Receiver
    before(async () => {
      t = await startTestPortal(dialect, WEBHOOKS)
      receiver = await startReceiver()
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    async function projectWithEndpoint(path: string) {
      const project = await createProject(t)
      const endpoint = await createEndpoint(t, project.id, receiver.url(path))
      return { project, endpoint }
    }

    async function createRule(body: Record<string, unknown>) {
      const created = await t.request('POST', '/api/alerts/rules', { token: t.adminToken, body })
      assert.equal(created.status, 201, created.text)
      return created.body
    }

    async function evaluateNow(ruleId: string) {
      const before = (await readAll(t, `/api/alerts/history?project_id=${(await t.request('GET', `/api/alerts/rules/${ruleId}`, { token: t.viewerToken })).body.projectId}&rule_id=${ruleId}`)).length
      assert.equal((await t.request('POST', `/api/alerts/rules/${ruleId}/evaluate`, { token: t.adminToken })).status, 202)
      return before
    }

    async function history(project: TestProject, ruleId: string, atLeast: number) {
      return eventually(async () => {
        const rows = await readAll(t, `/api/alerts/history?project_id=${project.id}&rule_id=${ruleId}`, t.viewerToken)
        return rows.length >= atLeast ? rows : undefined
      }, 15_000, `${atLeast} transitions of ${ruleId}`)
    }

    test('the signal catalog lists every module’s signals from the registry', async () => {
      const res = await t.request('GET', '/api/alerts/signals', { token: t.viewerToken })
      assert.equal(res.status, 200)
      const names = res.body.data.map((s: any) => s.name)
      for (const name of ['errors.new_group', 'errors.regression', 'errors.events', 'errors.users', 'logs.count', 'traces.duration', 'traces.error_rate', 'performance.metric', 'costs.spend', 'deploys.failed', 'webhooks.failure_rate', 'webhooks.oldest_pending', 'flags.changed', 'configs.changed', 'tenants.limit_used', 'video.failed_jobs', 'audit.actions']) {
        assert.ok(names.includes(name), name)
      }
      assert.equal(res.body.data.find((s: any) => s.name === 'deploys.failed').eventDriven, true)
    })

    test('bad rules are a 400 naming the field, and nothing is stored', async () => {
      const { project, endpoint } = await projectWithEndpoint('/bad')
      const good = errorLogsRule(project.id, [endpoint.id])
      const cases: [Record<string, unknown> | string, RegExp][] = [
        [{ ...good, signal: 'logs.nope' }, /^body\.signal: is not a known signal/],
        [{ ...good, filters: { colour: 'red' } }, /^body\.filters\.colour: is not a filter of logs\.count/],
        [{ ...good, by: 'tenant' }, /^body\.by: is not a dimension of logs\.count/],
        [{ ...good, aggregate: 'p99' }, /^body\.aggregate: /],
        [{ ...good, targets: { endpointIds: ['whe_missing'] } }, /^body\.targets\.endpointIds\.0: no endpoint whe_missing/],
        [{ ...good, windowSeconds: 30 }, /^body\.windowSeconds: /],
        [{ ...good, windowSeconds: 86_401 }, /^body\.windowSeconds: /],
        [{ ...good, intervalSeconds: 5 }, /^body\.intervalSeconds: /],
        [{ ...good, signal: 'costs.spend', filters: {} }, /^body\.filters\.currency: required by costs\.spend/],
        // 1e999 parses as Infinity, which the schema refuses as a number
        [JSON.stringify(good).replace('"critical":2', '"critical":1e999'), /^body\.condition\.critical: must be (a finite )?number/],
        [{ ...good, condition: { op: 'above', critical: 'high' } }, /^body\.condition\.critical: /],
      ]
      for (const [body, detail] of cases) {
        const res = await t.request('POST', '/api/alerts/rules', { token: t.adminToken, body })
        assert.equal(res.status, 400, `${typeof body === 'string' ? body : JSON.stringify(body)}: ${res.text}`)
        assert.match(res.body.detail, detail)
      }
      assert.deepEqual(await readAll(t, `/api/alerts/rules?project_id=${project.id}`), [])
    })

    test('admins write rules, viewers read them, every change is audited, a deleted endpoint shows as a broken target', async () => {
      const { project, endpoint } = await projectWithEndpoint('/crud')
      const refused = await t.request('POST', '/api/alerts/rules', { token: t.viewerToken, body: errorLogsRule(project.id, [endpoint.id]) })
      assert.equal(refused.status, 403)
      const rule = await createRule(errorLogsRule(project.id, [endpoint.id]))
      assert.equal(rule.state, 'ok')
      assert.deepEqual(rule.brokenTargets, [])
      assert.equal(rule.intervalSeconds, 3600)
      assert.equal(rule.noData, 'ok')
      const duplicate = await t.request('POST', '/api/alerts/rules', { token: t.adminToken, body: errorLogsRule(project.id, []) })
      assert.equal(duplicate.status, 409)
      const { projectId: _p, ...definition } = errorLogsRule(project.id, [endpoint.id], { windowSeconds: 600 })
      const replaced = await t.request('PUT', `/api/alerts/rules/${rule.id}`, { token: t.adminToken, body: definition })
      assert.equal(replaced.status, 200, replaced.text)
      assert.equal(replaced.body.windowSeconds, 600)
      assert.equal((await t.request('DELETE', `/api/webhooks/endpoints/${endpoint.id}`, { token: t.adminToken })).status, 204)
      const read = await t.request('GET', `/api/alerts/rules/${rule.id}`, { token: t.viewerToken })
      assert.deepEqual(read.body.brokenTargets, [endpoint.id])
      assert.equal((await t.request('DELETE', `/api/alerts/rules/${rule.id}`, { token: t.adminToken })).status, 204)
      const actions = (await readAll(t, `/api/modules/audit/events?project_id=${project.id}`)).map((e) => `${e.data.action} ${e.data.resource}`)
      for (const action of ['alert.rule.created', 'alert.rule.updated', 'alert.rule.deleted']) assert.ok(actions.includes(`${action} ${rule.id}`), `${action} in ${actions}`)
    })

    test('a threshold crossed fires once, signed, with value, threshold, window, link and sample lines; raising it resolves', async () => {
      const { project, endpoint } = await projectWithEndpoint('/fire')
      const rule = await createRule(errorLogsRule(project.id, [endpoint.id]))
      assert.equal((await ingest(t, project, [...errorLogs(3), event('log', { message: 'fine', level: 'info' })])).status, 200)
      await evaluateNow(rule.id)
      const [firing] = await history(project, rule.id, 1)
      assert.deepEqual([firing.from, firing.to, firing.value, firing.threshold, firing.severity], ['ok', 'firing', 3, 2, 'critical'])
      assert.equal(Date.parse(firing.windowTo) - Date.parse(firing.windowFrom), 300_000)
      const call = await eventually(() => receiver.callsTo('/fire')[0], 10_000, 'the firing notification')
      const message = verifyCall(endpoint.secret, call) as any
      assert.equal(message.type, 'alert.firing')
      assert.equal(call.headers['webhook-id'], firing.messageId)
      assert.equal(message.data.value, 3)
      assert.equal(message.data.threshold, 2)
      assert.equal(message.data.transitionId, firing.id)
      assert.match(message.data.headline, /FIRING critical\] error logs: 3 logs above 2 over 5 min/)
      assert.match(message.data.link, /^https:\/\/observe\.example\.com\/p\/prj_[^/]+\/logs\?from=.*&level=error/)
      assert.equal(message.data.topContributors.length, 3)
      assert.match(message.data.topContributors[0].label, /payment failed/)

      await evaluateNow(rule.id)
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.equal((await readAll(t, `/api/alerts/history?project_id=${project.id}&rule_id=${rule.id}`)).length, 1, 'still firing: no new transition')
      const { projectId: _p, ...raised } = errorLogsRule(project.id, [endpoint.id], { condition: { op: 'above', critical: 10 } })
      assert.equal((await t.request('PUT', `/api/alerts/rules/${rule.id}`, { token: t.adminToken, body: raised })).status, 200)
      await evaluateNow(rule.id)
      const [resolved] = await history(project, rule.id, 2)
      assert.deepEqual([resolved.from, resolved.to, resolved.value], ['firing', 'resolved', 3])
      const second = await eventually(() => receiver.callsTo('/fire')[1], 10_000, 'the resolution')
      assert.equal((verifyCall(endpoint.secret, second) as any).type, 'alert.resolved')
      assert.equal(receiver.callsTo('/fire').length, 2)

      // both transitions are changes beside the project's charts, newest first, each naming its rule
      const window = `from=${encodeURIComponent(new Date(Date.now() - 600_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 1000).toISOString())}`
      const changes = await t.request('GET', `/api/changes?project_id=${project.id}&${window}`, { token: t.viewerToken })
      assert.equal(changes.status, 200, changes.text)
      assert.deepEqual(
        changes.body.data.map((c: any) => [c.kind, c.eventType, c.eventId, c.subject, c.title, c.ts]),
        [
          ['alert', 'alert', resolved.id, rule.id, 'error logs resolved', resolved.at],
          ['alert', 'alert', firing.id, rule.id, 'error logs firing, critical', firing.at],
        ],
      )
    })

    test('a silenced transition is recorded with its silence and not delivered; silences are audited', async () => {
      const { project, endpoint } = await projectWithEndpoint('/silenced')
      const rule = await createRule(errorLogsRule(project.id, [endpoint.id]))
      const silence = await t.request('POST', '/api/alerts/silences', { token: t.adminToken, body: { projectId: project.id, ruleId: rule.id, endsAt: new Date(Date.now() + 3_600_000).toISOString(), reason: 'maintenance' } })
      assert.equal(silence.status, 201, silence.text)
      assert.equal(silence.body.active, true)
      await ingest(t, project, errorLogs(3))
      await evaluateNow(rule.id)
      const [firing] = await history(project, rule.id, 1)
      assert.equal(firing.to, 'firing')
      assert.equal(firing.silenceId, silence.body.id)
      assert.equal(firing.messageId, null)
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.equal(receiver.callsTo('/silenced').length, 0)
      const ended = await t.request('DELETE', `/api/alerts/silences/${silence.body.id}`, { token: t.adminToken })
      assert.equal(ended.body.active, false)
      const actions = (await readAll(t, `/api/modules/audit/events?project_id=${project.id}`)).map((e) => e.data.action)
      assert.ok(actions.includes('alert.silence.created') && actions.includes('alert.silence.ended'))
    })

    test('a new error group fires its event-driven rule without waiting for the interval', async () => {
      const { project, endpoint } = await projectWithEndpoint('/new-group')
      await createRule({ projectId: project.id, name: 'new issues', signal: 'errors.new_group', by: 'group', windowSeconds: 3600, intervalSeconds: 86_400, condition: { op: 'above', critical: 0 }, targets: { endpointIds: [endpoint.id] } })
      // Its first evaluation at creation finds nothing; the next is a day away.
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const captured = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'TypeError', message: 'cart is undefined' } })
      assert.equal(captured.status, 201, captured.text)
      // The endpoint takes every type: the portal's own error.group.created comes too.
      const call = await eventually(() => receiver.callsTo('/new-group').find((c) => JSON.parse(c.body).type === 'alert.firing'), 10_000, 'the new-group alert')
      const message = verifyCall(endpoint.secret, call) as any
      assert.equal(message.type, 'alert.firing')
      assert.equal(message.data.series, captured.body.fingerprint)
      assert.match(message.data.topContributors[0].label, /TypeError: cart is undefined/)
    })

    test('an event-driven rule fires while a paced cycle of interval rules is still under way', async () => {
      const { project, endpoint } = await projectWithEndpoint('/beside-cycle')
      await createRule({ projectId: project.id, name: 'new issues', signal: 'errors.new_group', windowSeconds: 3600, intervalSeconds: 86_400, condition: { op: 'above', critical: 0 }, targets: { endpointIds: [endpoint.id] } })
      const intervalRules: string[] = []
      for (let i = 0; i < 200; i++) intervalRules.push((await createRule({ ...errorLogsRule(project.id, []), name: `cycle ${i}`, intervalSeconds: 60 })).id)
      const db = t.portal.ctx.storage.db
      const cycleStart = Date.now()
      // every interval rule due at once: a tick spreads them over its pace (7.5 s) in claims of 32
      await sql`update alert_rules set next_evaluation_at = ${cycleStart} where id in (${sql.join(intervalRules)})`.execute(db)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const captured = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'RangeError', message: 'beside a cycle' } })
      assert.equal(captured.status, 201, captured.text)
      await eventually(() => receiver.callsTo('/beside-cycle').find((c) => JSON.parse(c.body).type === 'alert.firing'), 10_000, 'the new-group alert')
      const behind = await sql<{ n: number }>`select count(*) as n from alert_rules where id in (${sql.join(intervalRules)}) and evaluated_through < ${cycleStart}`.execute(db)
      assert.ok(Number(behind.rows[0].n) > 0, 'the alert came only after the cycle had ended')
      await sql`update alert_rules set enabled = 0 where id in (${sql.join(intervalRules)})`.execute(db)
    })

    test('past 100 series one "too many series" alert fires, never a flood', async () => {
      const { project, endpoint } = await projectWithEndpoint('/flood')
      const rule = await createRule({ ...errorLogsRule(project.id, [endpoint.id]), by: 'module', condition: { op: 'above', critical: 0 } })
      await ingest(t, project, Array.from({ length: 101 }, (_, i) => event('log', { message: 'boom', level: 'error', module: `m${i}` })))
      await evaluateNow(rule.id)
      const rows = await history(project, rule.id, 1)
      await new Promise((resolve) => setTimeout(resolve, 1000))
      assert.deepEqual(rows.map((row: any) => [row.series, row.to, row.value]), [['(too many series)', 'firing', 101]])
      await eventually(() => receiver.callsTo('/flood')[0], 10_000, 'the one notification')
      assert.equal(receiver.callsTo('/flood').length, 1)
    })

    test('the backtest replays stored history and counts what the rule would have fired', async () => {
      const project = await createProject(t)
      const now = Date.now()
      // Three bursts, hours apart: each fires, and resolves before the next.
      for (const hoursAgo of [5, 3, 1]) await ingest(t, project, errorLogs(4, new Date(now - hoursAgo * 3_600_000).toISOString()))
      const { projectId: _p, ...rule } = errorLogsRule(project.id, [], { intervalSeconds: 300 })
      const preview = await t.request('POST', '/api/alerts/preview', { token: t.adminToken, body: { projectId: project.id, rule, range: '24h' } })
      assert.equal(preview.status, 200, preview.text)
      assert.equal(preview.body.firings, 3)
      assert.equal(preview.body.stepSeconds, 300)
      assert.deepEqual(preview.body.thresholds, { critical: 2, warning: null, resolve: null })
      const line = preview.body.series[0].points
      assert.equal(line.filter((point: any) => point.value === 4).length, 3)
      assert.deepEqual(preview.body.transitions.map((tr: any) => tr.to), ['firing', 'resolved', 'firing', 'resolved', 'firing', 'resolved'])
    })

    test('rules as code: export, import is idempotent by name and reports created, changed and unchanged', async () => {
      const { project, endpoint } = await projectWithEndpoint('/code')
      await createRule(errorLogsRule(project.id, [endpoint.id]))
      await createRule({ ...errorLogsRule(project.id, []), name: 'slow checkout', signal: 'traces.duration', filters: { service: 'checkout' }, aggregate: 'p95', condition: { op: 'above', critical: 800, warning: 500, resolve: 400 } })
      const exported = await t.request('GET', `/api/alerts/rules-export?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(exported.status, 200)
      assert.deepEqual(exported.body.rules.map((r: any) => r.name), ['error logs', 'slow checkout'])
      const again = await t.request('POST', '/api/alerts/rules-import', { token: t.adminToken, body: { projectId: project.id, ...exported.body } })
      assert.deepEqual(again.body, { created: [], changed: [], unchanged: ['error logs', 'slow checkout'] })
      const edited = structuredClone(exported.body)
      edited.rules[1].condition.critical = 900
      edited.rules.push({ ...edited.rules[0], name: 'more error logs', windowSeconds: 900 })
      const imported = await t.request('POST', '/api/alerts/rules-import', { token: t.adminToken, body: { projectId: project.id, ...edited } })
      assert.deepEqual(imported.body, { created: ['more error logs'], changed: ['slow checkout'], unchanged: ['error logs'] })
      const bad = structuredClone(edited)
      bad.rules[2].signal = 'nope'
      const refused = await t.request('POST', '/api/alerts/rules-import', { token: t.adminToken, body: { projectId: project.id, ...bad } })
      assert.equal(refused.status, 400)
      assert.match(refused.body.detail, /^body\.rules\.2\.signal: /)
      assert.equal((await readAll(t, `/api/alerts/rules?project_id=${project.id}`)).length, 3)
    })
    test('a failing read is the error state, notified as alert.error, and the next good evaluation recovers it', async () => {
      const { project, endpoint } = await projectWithEndpoint('/error')
      const rule = await createRule({ projectId: project.id, name: 'errors seen', signal: 'errors.events', windowSeconds: 300, intervalSeconds: 3600, condition: { op: 'above', critical: 100 }, targets: { endpointIds: [endpoint.id] } })
      await history(project, rule.id, 0)
      await new Promise((resolve) => setTimeout(resolve, 800)) // its first evaluation, at creation: ok, nothing recorded
      const db = t.portal.ctx.storage.db
      await sql`alter table error_occurrences rename to error_occurrences_away`.execute(db)
      try {
        await evaluateNow(rule.id)
        const [failed] = await history(project, rule.id, 1)
        assert.deepEqual([failed.from, failed.to, failed.value], ['ok', 'error', null])
        assert.match(failed.detail, /error_occurrences/)
      } finally {
        await sql`alter table error_occurrences_away rename to error_occurrences`.execute(db)
      }
      const call = await eventually(() => receiver.callsTo('/error')[0], 10_000, 'the alert.error notification')
      const message = verifyCall(endpoint.secret, call) as any
      assert.equal(message.type, 'alert.error')
      assert.match(message.data.error, /error_occurrences/)
      await evaluateNow(rule.id)
      const [recovered] = await history(project, rule.id, 2)
      assert.deepEqual([recovered.from, recovered.to, recovered.value], ['error', 'ok', 0])
    })

    test('Slack and Discord endpoints get the headline, the link and the contributors rendered for them', async () => {
      const project = await createProject(t)
      const slack = await createEndpoint(t, project.id, receiver.url('/slack'), { kind: 'slack' })
      const discord = await createEndpoint(t, project.id, receiver.url('/discord'), { kind: 'discord' })
      const rule = await createRule(errorLogsRule(project.id, [slack.id, discord.id]))
      await ingest(t, project, errorLogs(3))
      await evaluateNow(rule.id)
      const slackBody = JSON.parse((await eventually(() => receiver.callsTo('/slack')[0], 10_000, 'the Slack message')).body)
      assert.match(slackBody.text, /^\[FIRING critical\] error logs: 3 logs above 2 over 5 min$/)
      assert.match(slackBody.blocks[0].text.text, /<https:\/\/observe\.example\.com\/p\/.*\|Open the window in the portal>/)
      assert.match(slackBody.blocks[0].text.text, /• payment failed/)
      const discordBody = JSON.parse((await eventually(() => receiver.callsTo('/discord')[0], 10_000, 'the Discord message')).body)
      assert.match(discordBody.content, /^\[FIRING critical\] error logs/)
      assert.match(discordBody.embeds[0].url, /^https:\/\/observe\.example\.com\/p\//)
      assert.match(discordBody.embeds[0].description, /• payment failed/)
    })

    test('windows of whole hours count from the hourly summaries and their partial hours from the events, alike', async () => {
      const project = await createProject(t)
      const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString()
      await ingest(t, project, [
        event('config', { path: 'deploy/values.yaml', actor: 'ana' }, ago(150)),
        event('config', { path: 'deploy/values.yaml', actor: 'bo' }, ago(130)),
        event('config', { path: 'feature/limits.json', actor: 'ana' }, ago(10)),
        event('config', { path: 'deploy/values.yaml', actor: 'ana' }, ago(200)),
        event('log', { message: 'a', level: 'error' }, ago(150)),
        event('log', { message: 'b', level: 'error' }, ago(70)),
        event('log', { message: 'c', level: 'error' }, ago(5)),
        event('log', { message: 'd', level: 'info' }, ago(5)),
        event('log', { message: 'e', level: 'error' }, ago(200)),
      ])
      const configs = await createRule({ projectId: project.id, name: 'config churn', signal: 'configs.changed', by: 'path', windowSeconds: 3 * 3600, intervalSeconds: 3600, condition: { op: 'above', critical: 0 } })
      const logs = await createRule({ projectId: project.id, name: 'errors, 3 h', signal: 'logs.count', filters: { level: 'error' }, windowSeconds: 3 * 3600, intervalSeconds: 3600, condition: { op: 'above', critical: 0 } })
      const byActor = await createRule({ projectId: project.id, name: 'ana’s changes', signal: 'configs.changed', filters: { actor: 'ana' }, windowSeconds: 3 * 3600, intervalSeconds: 3600, condition: { op: 'above', critical: 0 } })
      const fired = async (ruleId: string, transitions: number) => Object.fromEntries((await history(project, ruleId, transitions)).map((row: any) => [row.series, row.value]))
      assert.deepEqual(await fired(configs.id, 2), { 'deploy/values.yaml': 2, 'feature/limits.json': 1 })
      assert.deepEqual(await fired(logs.id, 1), { '': 3 })
      assert.deepEqual(await fired(byActor.id, 1), { '': 2 })
    })

    test('every signal evaluates on this store, split by each of its dimensions, with the values its events give', async () => {
      const project = await createProject(t)
      const failing = await createEndpoint(t, project.id, receiver.url('/fail/signals'), { eventTypes: ['nothing.here'] })
      await t.request('POST', '/api/webhooks/deliver', { token: t.adminToken, body: { projectId: project.id, eventType: 'probe', payload: {}, endpointIds: [failing.id] } })
      await eventually(async () => ((await readAll(t, `/api/webhooks/deliveries?project_id=${project.id}&status=failed`)).length === 1 ? true : undefined), 10_000, 'the failed delivery')
      const ingested = await ingest(t, project, [
        ...modules.map((module) => event(module.type, module.examples.valid)),
        event('deploy', { service: 'api', environment: 'production', status: 'FAILED', version: '2.0' }),
        event('video', { jobId: 'job-9', status: 'failed' }),
        event('cost', { amount: 40, currency: 'USD', service: 'db' }),
        event('trace', { traceId: 't9', spanId: 's9', serviceName: 'api', name: 'GET /', durationMs: 900, status: { code: 'error' } }),
        event('feature_flag', { key: 'dark-mode', enabled: true, actor: 'ana' }),
        event('audit', { actor: 'ana', action: 'project.deleted', resource: 'prj_x' }),
      ])
      assert.equal(ingested.status, 200, ingested.text)
      const captured = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'RangeError', message: 'basket size out of range', environment: 'production', user: { id: 'u1' } } })
      assert.equal(captured.status, 201, captured.text)
      const signals = (await t.request('GET', '/api/alerts/signals', { token: t.viewerToken })).body.data
      const created: { id: string; signal: string; by: string | null }[] = []
      for (const signal of signals) {
        const filters = Object.fromEntries((signal.requiredFilters as string[]).map((name) => [name, 'USD']))
        for (const by of [null, ...Object.keys(signal.dimensions)]) {
          for (const aggregate of by === null ? signal.aggregates : [signal.aggregates[0]]) {
            const rule = await createRule({ projectId: project.id, name: `${signal.name} ${aggregate} by ${by}`, signal: signal.name, filters, aggregate, by, windowSeconds: 600, intervalSeconds: 3600, condition: { op: 'above', critical: -1 } })
            created.push({ id: rule.id, signal: signal.name, by })
          }
        }
      }
      await eventually(async () => ((await readAll(t, `/api/alerts/rules?project_id=${project.id}`)).every((rule) => rule.lastEvaluatedAt !== null) ? true : undefined), 30_000, 'every rule evaluated')
      const history = await readAll(t, `/api/alerts/history?project_id=${project.id}`)
      assert.deepEqual(history.filter((row) => row.to === 'error').map((row) => `${row.ruleName}: ${row.detail}`), [], 'no signal failed to read')
      const valueOf = (name: string) => history.find((row) => row.ruleName === name)?.value
      assert.equal(valueOf('deploys.failed count by null'), 1)
      assert.equal(valueOf('video.failed_jobs count by null'), 1)
      // the module's example names a past period: only this month's spend counts
      assert.equal(valueOf('costs.spend sum by null'), 40)
      assert.equal(valueOf('traces.duration max by null'), 900)
      assert.equal(valueOf('traces.error_rate rate by null'), 50)
      assert.equal(valueOf('webhooks.failure_rate rate by null'), 100)
      assert.equal(valueOf('errors.users count_unique by null'), 1)
      assert.equal(valueOf('errors.new_group count by null'), 2)
      assert.equal(valueOf('audit.actions count by null') !== undefined, true)
      assert.ok(history.some((row) => row.ruleName === 'deploys.failed count by service' && row.series === 'api'))
      const evaluated = new Set(history.map((row) => row.ruleId))
      const silent = created.filter((rule) => !evaluated.has(rule.id)).map((rule) => `${rule.signal} by ${rule.by}`)
      // a series fires wherever the signal found data: only splits by a field no seeded event has stay quiet
      assert.ok(silent.length < created.length / 3, `no value from ${silent.join(', ')}`)
    })

    test('a group past the 100 occurrences it keeps still counts every event and every user of the window', async () => {
      const { project, endpoint } = await projectWithEndpoint('/busy-group')
      const at = new Date(Date.now() - 120_000).toISOString()
      // 150 users: 30 of them in staging (every fifth error), 120 in production
      const errors = Array.from({ length: 250 }, (_, i) =>
        event('error', { name: 'TypeError', message: 'cart is undefined', environment: i % 5 === 0 ? 'staging' : 'production', user: { id: `u${i % 150}` } }, at),
      )
      assert.equal((await ingest(t, project, errors)).status, 200)
      const [group] = await eventually(async () => {
        const groups = await readAll(t, `/api/errors/groups?project_id=${project.id}`, t.viewerToken)
        return groups.length === 1 && groups[0].count === 250 ? groups : undefined
      }, 15_000, 'the group counted')
      await eventually(async () => {
        const kept = await readAll(t, `/api/errors/groups/${group.fingerprint}/occurrences`, t.viewerToken)
        return kept.length === 100 ? kept : undefined
      }, 15_000, 'the group trimmed to its newest 100')
      const valueOf = async (body: Record<string, unknown>, signal = 'errors.events') => {
        const rule = await createRule({ projectId: project.id, name: `${signal} ${JSON.stringify(body)}`, signal, windowSeconds: 600, intervalSeconds: 3600, condition: { op: 'above', critical: -1 }, ...body })
        await evaluateNow(rule.id)
        const rows = await history(project, rule.id, 1)
        return Object.fromEntries(rows.map((row) => [row.series, row.value]))
      }
      assert.deepEqual(await valueOf({}), { '': 250 })
      assert.deepEqual(await valueOf({ filters: { group: group.fingerprint } }), { '': 250 })
      assert.deepEqual(await valueOf({ filters: { environment: 'staging' } }), { '': 50 })
      assert.deepEqual(await valueOf({ by: 'environment' }), { production: 200, staging: 50 })
      assert.deepEqual(await valueOf({ by: 'group' }), { [group.fingerprint]: 250 })
      assert.deepEqual(await valueOf({}, 'errors.users'), { '': 150 })
      // the notification ranks the group by the same count
      await valueOf({ targets: { endpointIds: [endpoint.id] } })
      const firing = await eventually(
        () => receiver.callsTo('/busy-group').map((call) => verifyCall(endpoint.secret, call) as any).find((message) => message.type === 'alert.firing'),
        10_000,
        'the firing notification',
      )
      assert.deepEqual(firing.data.topContributors.map((c: any) => [c.detail, c.value]), [[group.fingerprint, 250]])
      assert.deepEqual(await valueOf({ by: 'environment' }, 'errors.users'), { production: 120, staging: 30 })
    })

    test('alert history expires after RETENTION_DAYS_ALERTS', async () => {
      const project = await createProject(t)
      const rule = await createRule(errorLogsRule(project.id, []))
      await ingest(t, project, errorLogs(3))
      await evaluateNow(rule.id)
      await history(project, rule.id, 1)
      const db = t.portal.ctx.storage.db
      await sql`update alert_history set at = ${Date.now() - (t.config.retention.alertHistoryDays + 2) * 86_400_000} where rule_id = ${rule.id}`.execute(db)
      const report = await t.portal.retention.runNow()
      assert.ok((report.deleted.alert_history ?? 0) >= 1)
      assert.deepEqual(await readAll(t, `/api/alerts/history?project_id=${project.id}&rule_id=${rule.id}`), [])
    })
  })
}
