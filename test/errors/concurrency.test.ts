import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import type { Kysely } from 'kysely'
import { createProject, DIALECTS, event, ingest, type TestPortal } from '../support/portal.ts'
import { createLogger, startPortal } from '../../src/portal.ts'
import { capture, captured, groupOf, listGroups, watchAnnouncements, startErrorsPortal } from './support.ts'

const PARALLEL = 60

for (const dialect of DIALECTS) {
  describe(`concurrent captures on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startErrorsPortal(dialect)
    })
    after(() => t.close())

    test('captures of one new error arriving at once open exactly one group, with an exact count', async () => {
      const project = await createProject(t)
      const announcements = await watchAnnouncements(t, project)
      const body = (i: number) => ({ name: 'RaceError', message: `order ${i} failed`, environment: i % 2 ? 'production' : 'staging' })
      const responses = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => capture(t, project, body(i))))
      assert.deepEqual([...new Set(responses.map((r) => r.status))], [201])
      assert.equal(responses.filter((r) => r.body.isNewGroup).length, 1)
      assert.equal(new Set(responses.map((r) => r.body.fingerprint)).size, 1)
      const groups = await listGroups(t, project)
      assert.equal(groups.data.length, 1)
      assert.equal(groups.data[0].count, PARALLEL)
      assert.equal((await announcements()).filter((n) => n.type === 'error.group.created').length, 1)
      const detail = await groupOf(t, groups.data[0].fingerprint)
      assert.equal(detail.countsPerDay.at(-1).count, PARALLEL)
    })

    test('captures and ingested events of one new error racing each other still open one group', async () => {
      const project = await createProject(t)
      const viaCapture = Array.from({ length: PARALLEL / 2 }, (_, i) => capture(t, project, { name: 'MixedError', message: `user ${i} missing` }))
      const viaIngest = Array.from({ length: 10 }, (_, i) =>
        ingest(t, project, [event('error', { name: 'MixedError', message: `user ${1000 + i} missing` }), event('error', { name: 'MixedError', message: `user ${2000 + i} missing` })]),
      )
      const responses = await Promise.all([...viaCapture, ...viaIngest])
      assert.ok(responses.every((r) => r.status === 201 || (r.status === 200 && r.body.accepted === 2)))
      const groups = await listGroups(t, project)
      assert.equal(groups.data.length, 1)
      assert.equal(groups.data[0].count, PARALLEL / 2 + 20)
    })

    // One SQLite file has one writer process by design; PostgreSQL serves several portals at once.
    test('portals sharing one PostgreSQL database open one group for one new error', { skip: dialect !== 'postgres' }, async () => {
      const project = await createProject(t)
      const second = await startPortal(t.config, createLogger(t.config, new Writable({ write: (_chunk, _encoding, done) => done() })))
      try {
        const send = (base: string, i: number) =>
          fetch(`${base}/api/errors/capture`, {
            method: 'POST',
            headers: { authorization: `Bearer ${project.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'SharedError', message: `job ${i} failed` }),
          }).then((response) => response.json() as Promise<{ isNewGroup: boolean }>)
        const results = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => send(i % 2 ? t.url : second.url, i)))
        assert.equal(results.filter((r) => r.isNewGroup).length, 1)
        const groups = await listGroups(t, project)
        assert.equal(groups.data.length, 1)
        assert.equal(groups.data[0].count, PARALLEL)
      } finally {
        await second.close()
      }
    })

    test('a resolved group hit by many captures at once regresses once, with every occurrence counted', async () => {
      const project = await createProject(t)
      const first = await captured(t, project, { name: 'ReopenError', message: 'x' })
      await t.request('PATCH', `/api/errors/groups/${first.fingerprint}`, { token: t.adminToken, body: { status: 'resolved' } })
      const announcements = await watchAnnouncements(t, project)
      await Promise.all(Array.from({ length: PARALLEL }, () => captured(t, project, { name: 'ReopenError', message: 'x' })))
      const detail = await groupOf(t, first.fingerprint)
      assert.equal(detail.status, 'unresolved')
      assert.equal(detail.regressed, true)
      assert.equal(detail.count, PARALLEL + 1)
      assert.deepEqual((await announcements()).map((n) => n.type), ['error.group.regressed'])
    })

    test('a noisy group keeps only its latest 100 occurrences while its count stays exact', async () => {
      const project = await createProject(t)
      const base = Date.now() - 600_000
      const total = 130
      let fingerprint = ''
      for (let start = 0; start < total; start += 26) {
        const batch = Array.from({ length: 26 }, (_, k) => start + k)
        const results = await Promise.all(batch.map((i) => captured(t, project, { name: 'NoisyError', message: 'x', seq: i, timestamp: new Date(base + i * 1000).toISOString() })))
        fingerprint = results[0].fingerprint
      }
      const detail = await groupOf(t, fingerprint)
      assert.equal(detail.count, total)
      const kept: number[] = []
      let cursor: string | null = ''
      while (cursor !== null) {
        const page: any = (await t.request('GET', `/api/errors/groups/${fingerprint}/occurrences?limit=40${cursor ? `&cursor=${cursor}` : ''}`, { token: t.viewerToken })).body
        kept.push(...page.data.map((o: any) => o.metadata.seq))
        cursor = page.nextCursor
      }
      assert.equal(kept.length, 100)
      assert.deepEqual(kept, Array.from({ length: 100 }, (_, i) => total - 1 - i))
    })

    test('counts captures appended are folded into the group, its days and tags by the job, with no read, and the group trimmed', async () => {
      const project = await createProject(t)
      const total = 120
      const results = await Promise.all(Array.from({ length: total }, (_, i) => captured(t, project, { name: 'UnreadError', message: 'x', seq: i, release: `r${i % 3}` })))
      const db = t.portal.ctx.storage.db as unknown as Kysely<any>
      const group = await db.selectFrom('error_fingerprints').select('group_id').where('fingerprint', '=', results[0].fingerprint).executeTakeFirstOrThrow()
      const pending = () => db.selectFrom('error_count_deltas').select((eb) => eb.fn.countAll<number>().as('n')).where('group_id', '=', group.group_id).executeTakeFirstOrThrow()
      for (let polls = 0; polls < 100 && Number((await pending()).n) > 0; polls++) await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(Number((await pending()).n), 0, 'the fold job left deltas after 10 s')
      const row = await db.selectFrom('error_groups').select('count').where('id', '=', group.group_id).executeTakeFirstOrThrow()
      assert.equal(Number(row.count), total)
      const days = await db.selectFrom('error_fingerprint_days').select((eb) => eb.fn.sum<number>('count').as('n')).where('group_id', '=', group.group_id).executeTakeFirstOrThrow()
      assert.equal(Number(days.n), total)
      const releases = await db.selectFrom('error_fingerprint_tags').select(['value', 'count']).where('group_id', '=', group.group_id).where('key', '=', 'release').orderBy('value').execute()
      assert.deepEqual(releases.map((tag) => [tag.value, Number(tag.count)]), [['r0', 40], ['r1', 40], ['r2', 40]])
      const stored = await db.selectFrom('error_occurrences').select((eb) => eb.fn.countAll<number>().as('n')).where('group_id', '=', group.group_id).executeTakeFirstOrThrow()
      assert.equal(Number(stored.n), 100)
    })
  })
}
