import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createProject, DIALECTS, type TestPortal } from '../support/portal.ts'
import { captured, groupOf, listGroups, watchAnnouncements, startErrorsPortal } from './support.ts'

const DAY_MS = 86_400_000

for (const dialect of DIALECTS) {
  describe(`error groups on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startErrorsPortal(dialect)
    })
    after(() => t.close())

    const patch = (fingerprint: string, body: unknown, token = t.adminToken) => t.request('PATCH', `/api/errors/groups/${fingerprint}`, { token, body })

    test('the list filters by status, environment, release, service and text, and sorts by last seen, first seen or count', async () => {
      const project = await createProject(t)
      const now = Date.now()
      const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString()
      const a = await captured(t, project, { name: 'AError', message: 'alpha failed', environment: 'production', release: '1.0', service: 'api', timestamp: at(50) })
      await captured(t, project, { name: 'AError', message: 'alpha failed', environment: 'production', release: '1.1', service: 'api', timestamp: at(40) })
      await captured(t, project, { name: 'AError', message: 'alpha failed', environment: 'production', release: '1.1', service: 'api', timestamp: at(30) })
      const b = await captured(t, project, { name: 'BError', message: 'beta failed', environment: 'staging', release: '2.0', service: 'worker', timestamp: at(45) })
      const c = await captured(t, project, { name: 'CError', message: 'gamma failed', environment: 'production', release: '2.0', service: 'worker', timestamp: at(10) })
      await captured(t, project, { name: 'CError', message: 'gamma failed', environment: 'production', timestamp: at(20) })
      assert.equal((await patch(b.fingerprint, { status: 'ignored' })).status, 200)

      const names = (page: any) => page.data.map((group: any) => group.name)
      assert.deepEqual(names(await listGroups(t, project)), ['CError', 'AError', 'BError'])
      assert.deepEqual(names(await listGroups(t, project, '&sort=first_seen')), ['CError', 'BError', 'AError'])
      assert.deepEqual(names(await listGroups(t, project, '&sort=count')), ['AError', 'CError', 'BError'])
      assert.deepEqual(names(await listGroups(t, project, '&status=ignored')), ['BError'])
      assert.deepEqual(names(await listGroups(t, project, '&status=unresolved&environment=production')), ['CError', 'AError'])
      assert.deepEqual(names(await listGroups(t, project, '&release=2.0')), ['CError', 'BError'])
      assert.deepEqual(names(await listGroups(t, project, '&service=api')), ['AError'])
      assert.deepEqual(names(await listGroups(t, project, '&q=GAMMA')), ['CError'])

      const first = (await listGroups(t, project)).data.find((group: any) => group.fingerprint === a.fingerprint)
      assert.equal(first.count, 3)
      assert.equal(first.firstSeen, at(50))
      assert.equal(first.lastSeen, at(30))
      assert.deepEqual(first.releases, ['1.0', '1.1'])
      assert.equal(first.firstRelease, '1.0')
      assert.equal(first.lastRelease, '1.1')
      assert.deepEqual(first.environments, ['production'])
      const gamma = await groupOf(t, c.fingerprint)
      assert.equal(gamma.count, 2)
      assert.equal(gamma.lastRelease, '2.0')
    })

    test('the list pages with a cursor, newest first, without repeats or gaps', async () => {
      const project = await createProject(t)
      const base = Date.now() - 3_600_000
      for (let i = 0; i < 7; i++) await captured(t, project, { name: `E${i}`, message: 'x', timestamp: new Date(base + i * 1000).toISOString() })
      const seen: string[] = []
      let cursor: string | null = ''
      while (cursor !== null) {
        const page: any = await listGroups(t, project, `&limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...page.data.map((group: any) => group.name))
        cursor = page.nextCursor
      }
      assert.deepEqual(seen, ['E6', 'E5', 'E4', 'E3', 'E2', 'E1', 'E0'])
      const countSorted = await listGroups(t, project, '&sort=count&limit=5')
      const rest = await listGroups(t, project, `&sort=count&limit=5&cursor=${countSorted.nextCursor}`)
      assert.equal(new Set([...countSorted.data, ...rest.data].map((group: any) => group.name)).size, 7)
      const bad = await t.request('GET', `/api/errors/groups?project_id=${project.id}&sort=size`, { token: t.viewerToken })
      assert.equal(bad.status, 400)
      const unknown = await t.request('GET', `/api/errors/groups?project_id=${project.id}&colour=red`, { token: t.viewerToken })
      assert.equal(unknown.status, 400)
      assert.match(unknown.body.detail, /colour/)
    })

    test('the detail counts occurrences per day for 14 days and shows the most recent occurrences first', async () => {
      const project = await createProject(t)
      const now = Date.now()
      const body = (daysAgo: number, release: string) => ({ name: 'DayError', message: 'daily', release, timestamp: new Date(now - daysAgo * DAY_MS).toISOString() })
      const first = await captured(t, project, body(20, '0.9'))
      await captured(t, project, body(3, '1.0'))
      await captured(t, project, body(3, '1.0'))
      const latest = await captured(t, project, body(0, '1.1'))
      const detail = await groupOf(t, first.fingerprint)
      assert.equal(detail.count, 4)
      assert.equal(detail.countsPerDay.length, 14)
      const day = (daysAgo: number) => new Date(now - daysAgo * DAY_MS).toISOString().slice(0, 10)
      assert.deepEqual(detail.countsPerDay.at(-1), { date: day(0), count: 1 })
      assert.deepEqual(detail.countsPerDay.find((entry: any) => entry.date === day(3)), { date: day(3), count: 2 })
      assert.equal(detail.countsPerDay.reduce((sum: number, entry: any) => sum + entry.count, 0), 3)
      assert.equal(detail.firstRelease, '0.9')
      assert.equal(detail.lastRelease, '1.1')
      assert.deepEqual(detail.occurrences.map((o: any) => o.id)[0], latest.id)
      assert.equal(detail.occurrences.length, 4)
      const list = await t.request('GET', `/api/errors/groups?project_id=${project.id}`, { token: t.viewerToken })
      assert.deepEqual(list.body.data[0].countsPerDay, detail.countsPerDay, 'the stream carries the same days, without a read per group')
    })

    test('an occurrence of a resolved group reopens it as regressed, once, and announces it; ignored stays ignored', async () => {
      const project = await createProject(t)
      const announcements = await watchAnnouncements(t, project)
      const first = await captured(t, project, { name: 'RegressError', message: 'x' })
      assert.deepEqual((await announcements()).map((n) => [n.type, n.projectId, n.data.fingerprint]), [['error.group.created', project.id, first.fingerprint]])
      const resolved = await patch(first.fingerprint, { status: 'resolved' })
      assert.equal(resolved.status, 200)
      assert.equal(resolved.body.status, 'resolved')
      await captured(t, project, { name: 'RegressError', message: 'x' })
      await captured(t, project, { name: 'RegressError', message: 'x' })
      const reopened = await groupOf(t, first.fingerprint)
      assert.equal(reopened.status, 'unresolved')
      assert.equal(reopened.regressed, true)
      assert.equal(reopened.count, 3)
      assert.deepEqual((await announcements()).map((n) => n.type), ['error.group.created', 'error.group.regressed'])
      const triaged = await patch(first.fingerprint, { status: 'ignored' })
      assert.equal(triaged.body.regressed, false)
      await captured(t, project, { name: 'RegressError', message: 'x' })
      assert.equal((await groupOf(t, first.fingerprint)).status, 'ignored')
      assert.equal((await announcements()).length, 2)
    })

    test('triage refuses viewers, unknown statuses, unknown groups and other projects’ deleted groups', async () => {
      const project = await createProject(t)
      const group = await captured(t, project, { name: 'TriageError', message: 'x' })
      assert.equal((await patch(group.fingerprint, { status: 'resolved' }, t.viewerToken)).status, 403)
      const badStatus = await patch(group.fingerprint, { status: 'fixed' })
      assert.equal(badStatus.status, 400)
      assert.match(badStatus.body.detail, /^body\.status/)
      assert.equal((await patch(group.fingerprint, { status: 'resolved', note: 'x' })).status, 400)
      assert.equal((await patch('0'.repeat(64), { status: 'resolved' })).status, 404)
      assert.equal((await t.request('GET', '/api/errors/groups/not-a-fingerprint', { token: t.viewerToken })).status, 400)
      assert.equal((await t.request('DELETE', `/api/projects/${project.id}`, { token: t.adminToken })).status, 204)
      assert.equal((await t.request('GET', `/api/errors/groups/${group.fingerprint}`, { token: t.viewerToken })).status, 404)
      assert.equal((await patch(group.fingerprint, { status: 'resolved' })).status, 404)
    })

    test('a capture repeated with its idempotency key is answered again, not counted again', async () => {
      const project = await createProject(t)
      const send = (key: string, body: unknown) =>
        t.request('POST', '/api/errors/capture', { token: project.key, body, headers: { 'x-service-idempotency-key': key } })
      const key = randomUUID()
      const body = { name: 'RetriedError', message: 'sent twice' }
      const first = await send(key, body)
      assert.equal(first.status, 201)
      assert.equal(first.headers.get('idempotent-replayed'), null)
      const again = await send(key, body)
      assert.equal(again.status, 201)
      assert.equal(again.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(again.body, first.body, 'the first answer, occurrence id and group included')
      assert.equal((await captured(t, project, body)).groupFingerprint, first.body.groupFingerprint)
      assert.equal((await groupOf(t, first.body.groupFingerprint)).count, 2, 'the replay recorded nothing')

      const notUuid = await send('not-a-uuid', body)
      assert.equal(notUuid.status, 400)
      assert.equal(notUuid.body.code, 'invalid_idempotency_key')
    })

    test('a capture key repeated with another body, even an invalid one, replays the first 201 and records nothing (spec 4.1 rule 2)', async () => {
      const project = await createProject(t)
      const send = (body: unknown) => t.request('POST', '/api/errors/capture', { token: project.key, body, headers: { 'x-service-idempotency-key': key } })
      const key = randomUUID()
      const first = await send({ name: 'FirstError', message: 'one' })
      assert.equal(first.status, 201)
      for (const body of [{ name: 'OtherError', message: 'two' }, { message: 'no name' }]) {
        const repeat = await send(body)
        assert.equal(repeat.status, 201, repeat.text)
        assert.equal(repeat.headers.get('idempotent-replayed'), 'true')
        assert.deepEqual(repeat.body, first.body)
      }
      assert.deepEqual((await listGroups(t, project)).data.map((group: any) => [group.name, group.count]), [['FirstError', 1]])
    })

    for (const bodies of ['identical', 'different'] as const) {
      test(`concurrent captures with one key and ${bodies} bodies record one occurrence`, async () => {
        const project = await createProject(t)
        const key = randomUUID()
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, n) =>
            t.request('POST', '/api/errors/capture', {
              token: project.key,
              body: { name: bodies === 'identical' ? 'RaceError' : `RaceError${n}`, message: 'raced' },
              headers: { 'x-service-idempotency-key': key },
            }),
          ),
        )
        for (const answer of answers) assert.ok(answer.status === 201 || answer.status === 409, `${answer.status} ${answer.text}`)
        for (const answer of answers.filter((a) => a.status === 409)) assert.equal(answer.body.code, 'idempotency_key_in_flight')
        const created = answers.filter((a) => a.status === 201)
        assert.equal(created.filter((a) => a.headers.get('idempotent-replayed') === null).length, 1, 'exactly one original answer')
        for (const answer of created) assert.deepEqual(answer.body, created[0].body)
        const groups = (await listGroups(t, project)).data
        assert.equal(groups.length, 1)
        assert.equal(groups[0].count, 1)
      })
    }

    test('status reports the grouping algorithm and a project’s group counts', async () => {
      const project = await createProject(t)
      const one = await captured(t, project, { name: 'S1', message: 'x' })
      await captured(t, project, { name: 'S2', message: 'x' })
      await patch(one.fingerprint, { status: 'resolved' })
      const status = await t.request('GET', `/api/errors/status?project_id=${project.id}`, { token: t.viewerToken })
      assert.equal(status.status, 200)
      assert.equal(status.body.groupingAlgorithm, 'v3')
      assert.equal(status.body.occurrencesKeptPerGroup, 100)
      assert.equal(status.body.groups, 2)
      assert.equal(status.body.unresolvedGroups, 1)
    })
  })
}
