import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Kysely } from 'kysely'
import { allMigrations } from '../portal.ts'
import { migrate } from '../storage/migrations.ts'
import { openStorage } from '../storage/open-storage.ts'
import type { Storage } from '../storage/storage.ts'
import { createTestDatabase, DIALECTS } from '../../test/support/portal.ts'

/** The event tables as the first release laid them out: every migration numbered 001, and the core ones. */
const firstRelease = allMigrations.filter((migration) => !/\/00[2-9]_/.test(migration.name))

const row = (table: string, id: string, ts: number, data: Record<string, unknown>, columns: Record<string, unknown>) => ({
  table,
  values: { id, project_id: 'prj_a', ts, received_at: ts, data: JSON.stringify(data), ...columns },
})

for (const dialect of DIALECTS) {
  describe(`module read migrations over existing events on ${dialect}`, () => {
    let storage: Storage
    let drop: () => Promise<void>
    let db: Kysely<any>
    let migratedAt: number
    before(async () => {
      const database = await createTestDatabase(dialect)
      drop = database.drop
      storage = await openStorage(database.url, { poolSize: 2, queryTimeoutMs: 15_000, sqliteSynchronous: 'full' })
      db = storage.db as unknown as Kysely<any>
      await migrate(storage, firstRelease)
      const hour = Date.parse('2026-03-15T10:00:00.000Z')
      await db.insertInto('organizations').values({ id: 'org_a', name: 'a', created_at: hour }).execute()
      await db.insertInto('projects').values({ id: 'prj_a', org_id: 'org_a', name: 'a', created_at: hour, updated_at: hour }).execute()
      for (const { table, values } of [
        row('feature_flag_events', 'evt_2', hour + 20, { key: 'beta', enabled: false }, { flag_key: 'beta', actor: null }),
        row('feature_flag_events', 'evt_1', hour + 10, { key: 'beta', enabled: true }, { flag_key: 'beta', actor: null }),
        row('feature_flag_events', 'evt_3', hour + 5, { key: 'other' }, { flag_key: 'other', actor: null }),
        row('cost_events', 'evt_4', Date.parse('2026-02-28T23:00:00.000Z'), { amount: 1, currency: 'USD' }, { amount: 1, currency: 'USD', period: null }),
        row('tenant_events', 'evt_5', hour, { plan: 'team' }, { tenant_project_id: null, plan: 'team' }),
        row('tenant_events', 'evt_9', hour + 1, { plan: 'team', ingestLimitPerSecond: 5_000_000_000 }, { tenant_project_id: null, plan: 'team' }),
        row('video_events', 'evt_10', hour, { jobId: 'job-1', targetUrl: 'https://example.com/page' }, { job_id: 'job-1', status: null }),
        row('video_events', 'evt_11', hour + 1, { jobId: 'job-1', status: 'done', artifactUrl: 'https://cdn.example.com/job-1.mp4' }, { job_id: 'job-1', status: 'done' }),
        row('log_events', 'evt_6', hour + 1, { message: 'a', level: 'info' }, { level: 'info', module: null, message: 'a' }),
        row('log_events', 'evt_7', hour + 3_600_000, { message: 'b', level: 'info' }, { level: 'info', module: null, message: 'b' }),
        row('log_events', 'evt_8', hour + 2, { message: 'c' }, { level: null, module: null, message: 'c' }),
      ]) {
        await db.insertInto(table).values(values).execute()
      }
      migratedAt = Date.now()
      await migrate(storage, allMigrations)
    })
    after(async () => {
      await storage.close()
      await drop()
    })

    test('group summaries start from the events already stored', async () => {
      const flags = await db.selectFrom('feature_flag_summary').select(['flag_key', 'events', 'last_event_id', 'first_ts']).orderBy('flag_key').execute()
      assert.deepEqual(
        flags.map((f) => [f.flag_key, Number(f.events), f.last_event_id]),
        [
          ['beta', 2, 'evt_2'],
          ['other', 1, 'evt_3'],
        ],
      )
      const plans = await db.selectFrom('tenant_plan_summary').select(['tenant_project_id', 'events']).execute()
      assert.deepEqual(plans.map((p) => [p.tenant_project_id, Number(p.events)]), [['prj_a', 2]])
    })

    test('fields not every event repeats are copied to their indexed columns', async () => {
      const videos = await db.selectFrom('video_events').select(['id', 'target_url', 'artifact_url']).orderBy('id').execute()
      assert.deepEqual(videos, [
        { id: 'evt_10', target_url: 'https://example.com/page', artifact_url: null },
        { id: 'evt_11', target_url: null, artifact_url: 'https://cdn.example.com/job-1.mp4' },
      ])
      // and a job's latest status to its summary, where the job list filters by it
      const jobs = await db.selectFrom('video_job_summary').select(['job_id', 'latest_status']).execute()
      assert.deepEqual(jobs, [{ job_id: 'job-1', latest_status: 'done' }])
      const tenants = await db.selectFrom('tenant_events').select(['id', 'ingest_limit_per_second']).orderBy('id').execute()
      assert.deepEqual(tenants.map((row) => [row.id, row.ingest_limit_per_second]), [['evt_5', null], ['evt_9', 5_000_000_000]])
    })

    test('costs without a period get the month of their time, and logs their hourly level counts', async () => {
      const cost = await db.selectFrom('cost_events').select('period').executeTakeFirstOrThrow()
      assert.equal(cost.period, '2026-02')
      const hours = await db.selectFrom('log_level_hours').select(['hour', 'level', 'events']).orderBy('hour').orderBy('level_key').execute()
      assert.deepEqual(
        hours.map((h) => [new Date(Number(h.hour)).toISOString(), h.level, Number(h.events)]),
        [
          ['2026-03-15T10:00:00.000Z', 'info', 1],
          ['2026-03-15T10:00:00.000Z', null, 1],
          ['2026-03-15T11:00:00.000Z', 'info', 1],
        ],
      )
    })

    test('a project with logs before the minute level counts began reads those minutes from its logs: the counts start at the next minute', async () => {
      assert.equal(Number((await db.selectFrom('log_level_minutes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n), 0)
      const since = await db.selectFrom('log_level_minutes_since').select(['project_id', 'since']).execute()
      assert.deepEqual(since.map((row) => row.project_id), ['prj_a'])
      const first = Number(since[0].since)
      assert.equal(first % 60_000, 0)
      assert.ok(first > migratedAt && first <= migratedAt + 120_000, `counts begin at ${new Date(first).toISOString()}, migrated at ${new Date(migratedAt).toISOString()}`)
    })
  })
}
