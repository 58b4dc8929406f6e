import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Kysely } from 'kysely'
import { createProject, DIALECTS, event, readAll, startTestPortal, type TestPortal, type TestProject } from './support/portal.ts'
import { ingestAll, read } from './support/module-reads.ts'
import { deleteExpiredRows, type RetentionReport } from '../src/retention/job.ts'

const DAY = 86_400_000
const today = Math.floor(Date.now() / DAY) * DAY
/** An hour into the UTC day `days` before today: clear of the whole-day cutoffs on either side. */
const daysAgo = (days: number) => new Date(today - days * DAY + 3_600_000).toISOString()

const messages = async (t: TestPortal, project: TestProject, base = '/api/modules/logs') =>
  (await readAll(t, `${base}/events?project_id=${project.id}`)).map((e: any) => e.data.message ?? e.data.service ?? e.data.action).sort()

for (const dialect of DIALECTS) {
  describe(`retention on ${dialect}`, () => {
    let t: TestPortal
    let db: Kysely<any>
    let plain: TestProject
    let short: TestProject
    let report: RetentionReport
    before(async () => {
      t = await startTestPortal(dialect, { RETENTION_DAYS: '30', RETENTION_DAYS_LOG: '7', RETENTION_DELETE_BATCH_ROWS: '2', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '100000' })
      db = t.portal.ctx.storage.db as unknown as Kysely<any>
      plain = await createProject(t, 'install settings')
      short = await createProject(t, 'own settings')
      const set = await t.request('PUT', `/api/projects/${short.id}/retention`, { token: t.adminToken, body: { days: 3, modules: { deploy: 60 } } })
      assert.equal(set.status, 200, set.text)
      for (const project of [plain, short]) {
        await ingestAll(t, project, [
          ...[12, 10, 9, 8].map((days) => event('log', { message: `log ${days}d` }, daysAgo(days))),
          ...[5, 2].map((days) => event('log', { message: `log ${days}d` }, daysAgo(days))),
          event('deploy', { service: 'deploy 40d' }, daysAgo(40)),
          event('deploy', { service: 'deploy 20d' }, daysAgo(20)),
          event('audit', { actor: 'a', action: 'audit 400d' }, daysAgo(400)),
          event('audit', { actor: 'a', action: 'audit 100d' }, daysAgo(100)),
          event('error', { name: 'OldError', message: 'from long ago' }, daysAgo(45)),
        ])
      }
      // Records and webhook rows are dated by the portal's clock; they are aged here as time would age them.
      await ingestAll(t, plain, [event('log', { message: 'log 1d' }, daysAgo(1))])
      await db.updateTable('idempotency_keys').set({ created_at: Date.now() - 2 * DAY }).execute()
      const old = today - 40 * DAY
      await db.insertInto('webhook_messages').values([
        { id: 'msg_old', project_id: plain.id, event_type: 'x', payload: '{}', created_at: old },
        { id: 'msg_pending', project_id: plain.id, event_type: 'x', payload: '{}', created_at: old },
      ]).execute()
      await db.insertInto('webhook_deliveries').values([
        { id: 'dlv_done', project_id: plain.id, endpoint_id: 'whe_x', message_id: 'msg_old', event_type: 'x', status: 'failed', attempt_count: 1, final_attempt: 1, created_at: old, updated_at: old },
        { id: 'dlv_pending', project_id: plain.id, endpoint_id: 'whe_x', message_id: 'msg_pending', event_type: 'x', status: 'pending', attempt_count: 1, final_attempt: 2, created_at: old, updated_at: old },
      ]).execute()
      await db.insertInto('webhook_attempts').values({ id: 'att_old', delivery_id: 'dlv_done', project_id: plain.id, endpoint_id: 'whe_x', number: 1, status: 'failed', started_at: old, duration_ms: 1, request: '{}' }).execute()
      report = await t.portal.retention.runNow()
    })
    after(() => t.close())

    test('a module override keeps logs 7 whole days and the default keeps deploys 30', async () => {
      assert.deepEqual(await messages(t, plain), ['log 1d', 'log 2d', 'log 5d'])
      assert.deepEqual(await messages(t, plain, '/api/modules/deploys'), ['deploy 20d'])
    })

    test('a project’s own days and per-type setting replace the install’s', async () => {
      assert.deepEqual(await messages(t, short), ['log 2d'])
      assert.deepEqual(await messages(t, short, '/api/modules/deploys'), ['deploy 20d', 'deploy 40d'])
    })

    test('audit keeps its year unless a project names it, and the project’s days leave it alone', async () => {
      for (const project of [plain, short]) {
        const actions = await messages(t, project, '/api/modules/audit')
        assert.ok(actions.includes('audit 100d') && !actions.includes('audit 400d'), actions.join())
      }
    })

    test('error occurrences expire and their group stays', async () => {
      const groups = await read(t, `/api/errors/groups?project_id=${plain.id}`)
      assert.equal(groups.data.length, 1)
      const occurrences = await read(t, `/api/errors/groups/${groups.data[0].fingerprint}/occurrences`)
      assert.deepEqual(occurrences.data, [])
      assert.equal(await db.selectFrom('error_events').select('id').where('project_id', '=', plain.id).execute().then((rows) => rows.length), 0)
    })

    test('idempotency records go after 24 hours, finished webhook messages and attempts after their days, a pending delivery stays', async () => {
      assert.equal((await db.selectFrom('idempotency_keys').select('key').execute()).length, 0)
      assert.deepEqual((await db.selectFrom('webhook_messages').select('id').execute()).map((row) => row.id), ['msg_pending'])
      assert.deepEqual((await db.selectFrom('webhook_deliveries').select('id').execute()).map((row) => row.id), ['dlv_pending'])
      assert.equal((await db.selectFrom('webhook_attempts').select('id').execute()).length, 0)
    })

    test('the report counts what went, table by table', () => {
      assert.equal(report.deleted.log_events, 4 + 5)
      assert.equal(report.deleted.deploy_events, 1)
      assert.equal(report.deleted.webhook_messages, 1)
      assert.equal(report.stopped, false)
      assert.deepEqual(report.failed, {})
    })

    test('deletes go in steps of the batch size, each its own statement', async () => {
      const project = await createProject(t, 'steps')
      await ingestAll(t, project, [1, 2, 3, 4, 5].map((n) => event('log', { message: `old ${n}` }, daysAgo(20))))
      let steps = 0
      const rows = { table: 'log_events', timeColumn: 'ts', key: ['id'] }
      // the log events' own store: the same database, or DuckDB with EVENT_STORE=duckdb
      const events = t.portal.ctx.storage.eventsOf('log_events').db
      const first = await deleteExpiredRows(events, rows, today - 7 * DAY, project.id, 2, () => steps++ >= 1)
      assert.equal(first, 2)
      assert.equal((await messages(t, project)).length, 3)
      assert.equal(await deleteExpiredRows(events, rows, today - 7 * DAY, project.id, 2, () => false), 3)
    })

    test('module status shows size on disk, oldest event and the retention in force', async () => {
      const status = await read(t, `/api/modules/logs/status?project_id=${short.id}`)
      assert.equal(status.oldestEventAt, daysAgo(2))
      assert.equal(status.retentionDays, 3)
      assert.ok(Number.isInteger(status.sizeBytes) && status.sizeBytes > 0, String(status.sizeBytes))
      const install = await read(t, '/api/modules/logs/status')
      assert.equal(install.retentionDays, 7)
      assert.ok(install.oldestEventAt <= daysAgo(2))
    })

    test('the project setting is admin-only, validated against the registry and audited', async () => {
      const viewer = await t.request('PUT', `/api/projects/${plain.id}/retention`, { token: t.viewerToken, body: { days: 5 } })
      assert.equal(viewer.status, 403)
      const unknown = await t.request('PUT', `/api/projects/${plain.id}/retention`, { token: t.adminToken, body: { days: 5, modules: { nosuch: 3 } } })
      assert.equal(unknown.status, 400)
      assert.match(unknown.body.detail, /nosuch/)
      const zero = await t.request('PUT', `/api/projects/${plain.id}/retention`, { token: t.adminToken, body: { days: 0 } })
      assert.equal(zero.status, 400)
      const set = await t.request('PUT', `/api/projects/${plain.id}/retention`, { token: t.adminToken, body: { days: 14, modules: { audit: 730 } } })
      assert.equal(set.status, 200, set.text)
      const read1 = await read(t, `/api/projects/${plain.id}/retention`)
      const decided = (type: string) => [read1.effective[type].days, read1.effective[type].source]
      assert.deepEqual([read1.days, read1.modules, decided('log'), decided('audit'), decided('deploy')], [14, { audit: 730 }, [14, 'project'], [730, 'project_module'], [14, 'project']])
      assert.equal(read1.effective.log.statusPath, '/api/modules/logs/status')
      const audit = await readAll(t, `/api/modules/audit/events?project_id=${plain.id}&action=project.retention_updated`)
      assert.equal(audit.length, 1)
      assert.deepEqual(audit[0].data.metadata.to, { days: 14, modules: { audit: 730 } })
      const otherOrg = await t.request('GET', `/api/projects/prj_nosuch/retention`, { token: t.adminToken })
      assert.equal(otherOrg.status, 404)
    })
  })
}
