import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { createProject, DIALECTS, type TestPortal, type TestProject } from '../support/portal.ts'
import { createLogger, startPortal } from '../../src/portal.ts'
import { eventually } from '../webhooks/receiver.ts'
import { captured, groupOf, listGroups, startErrorsPortal, watchAnnouncements } from './support.ts'

const HOUR_MS = 3_600_000

for (const dialect of DIALECTS) {
  describe(`resolving in a release and ignoring until a condition on ${dialect}`, () => {
    let t: TestPortal
    before(async () => {
      t = await startErrorsPortal(dialect)
    })
    after(() => t.close())

    const patch = (fingerprint: string, body: unknown) => t.request('PATCH', `/api/errors/groups/${fingerprint}`, { token: t.adminToken, body })
    const patched = async (fingerprint: string, body: unknown) => {
      const response = await patch(fingerprint, body)
      assert.equal(response.status, 200, response.text)
      return response.body
    }
    /** An occurrence of the project's one error, in `release` (or none), `hoursAgo` hours ago. */
    const occur = (project: TestProject, release?: string, hoursAgo = 0, name = 'CheckoutError') =>
      captured(t, project, { name, message: 'total is NaN', release, timestamp: new Date(Date.now() - hoursAgo * HOUR_MS).toISOString() })

    test('resolved in the next release: releases the project named before, or none, leave it resolved; a new release reopens it as regressed', async () => {
      const project = await createProject(t)
      const announcements = await watchAnnouncements(t, project)
      const { fingerprint } = await occur(project, '1.0', 3)
      await occur(project, '1.1', 2, 'OtherError') // another group named 1.1: it was out when the group was resolved
      const resolved = await patched(fingerprint, { status: 'resolved', statusDetails: { inNextRelease: true } })
      assert.deepEqual(resolved.statusDetails, { inNextRelease: true, inRelease: null, latestRelease: '1.1', ignoreUntil: null, ignoreUntilCount: null, ignoreUntilUserCount: null })
      await occur(project, '1.0')
      await occur(project, '1.1')
      await occur(project)
      const still = await groupOf(t, fingerprint)
      assert.deepEqual([still.status, still.regressed, still.count], ['resolved', false, 4])
      await occur(project, '1.2')
      const reopened = await groupOf(t, fingerprint)
      assert.deepEqual([reopened.status, reopened.regressed, reopened.statusDetails.inNextRelease], ['unresolved', true, false])
      assert.deepEqual((await announcements()).filter((n) => n.data.fingerprint === fingerprint).map((n) => n.type), ['error.group.created', 'error.group.regressed'])
      // resolved again in the next release: 1.2 is known now, and leaves it resolved
      await patched(fingerprint, { status: 'resolved', statusDetails: { inNextRelease: true } })
      await occur(project, '1.2')
      assert.equal((await groupOf(t, fingerprint)).status, 'resolved')
    })

    test('resolved in release X: releases first named before X leave it resolved; X, and a release not named yet, reopen it', async () => {
      const project = await createProject(t)
      const { fingerprint } = await occur(project, '1.0', 3)
      await occur(project, '1.1', 2, 'OtherError')
      await occur(project, '1.2', 1, 'OtherError')
      const resolved = await patched(fingerprint, { status: 'resolved', statusDetails: { inRelease: '1.1' } })
      assert.equal(resolved.statusDetails.inRelease, '1.1')
      await occur(project, '1.0')
      assert.equal((await groupOf(t, fingerprint)).status, 'resolved')
      await occur(project, '1.2')
      assert.equal((await groupOf(t, fingerprint)).status, 'unresolved', '1.2 was first named after 1.1: a later release')

      await patched(fingerprint, { status: 'resolved', statusDetails: { inRelease: '1.2' } })
      await occur(project, '1.1')
      assert.equal((await groupOf(t, fingerprint)).status, 'resolved')
      await occur(project, '1.2')
      assert.equal((await groupOf(t, fingerprint)).status, 'unresolved', 'the release it was fixed in')

      await patched(fingerprint, { status: 'resolved', statusDetails: { inRelease: '2.0' } }) // not named yet
      await occur(project, '1.2')
      assert.equal((await groupOf(t, fingerprint)).status, 'resolved')
      await occur(project, '1.3')
      assert.equal((await groupOf(t, fingerprint)).status, 'unresolved', 'a release named after it was resolved')
    })

    test('ignored until N more occurrences: unresolved and unignored at the Nth, announced once; the next triage clears it', async () => {
      const project = await createProject(t)
      const announcements = await watchAnnouncements(t, project)
      const { fingerprint } = await occur(project)
      await occur(project)
      const ignored = await patched(fingerprint, { status: 'ignored', statusDetails: { ignoreCount: 3 } })
      assert.equal(ignored.statusDetails.ignoreUntilCount, 5)
      await occur(project)
      await occur(project)
      const waiting = await groupOf(t, fingerprint)
      assert.deepEqual([waiting.status, waiting.unignored, waiting.count], ['ignored', false, 4])
      await occur(project)
      await occur(project)
      const back = await groupOf(t, fingerprint)
      assert.deepEqual([back.status, back.unignored, back.statusDetails.ignoreUntilCount], ['unresolved', true, null])
      assert.deepEqual((await listGroups(t, project, '&status=unresolved')).data.map((group: any) => [group.fingerprint, group.unignored]), [[fingerprint, true]])
      assert.deepEqual((await announcements()).map((n) => n.type), ['error.group.created', 'error.group.unignored'])
      assert.equal((await patched(fingerprint, { status: 'ignored' })).unignored, false)
    })

    test('ignored until N more users: more occurrences of the users affected so far leave it ignored; the Nth new user brings it back', async () => {
      const project = await createProject(t)
      const seen = (user: string) => captured(t, project, { name: 'SignupError', message: 'x', user: { id: user } })
      const { fingerprint } = await seen('u1')
      await seen('u2')
      const ignored = await patched(fingerprint, { status: 'ignored', statusDetails: { ignoreUserCount: 2 } })
      assert.equal(ignored.statusDetails.ignoreUntilUserCount, 4)
      for (const user of ['u1', 'u2', 'u1', 'u3']) await seen(user)
      const waiting = await groupOf(t, fingerprint)
      assert.deepEqual([waiting.status, waiting.usersAffected, waiting.count], ['ignored', 3, 6])
      await seen('u4')
      const back = await groupOf(t, fingerprint)
      assert.deepEqual([back.status, back.unignored, back.usersAffected, back.statusDetails.ignoreUntilUserCount], ['unresolved', true, 4, null])
    })

    test('ignored until a time: unresolved when it passes with no occurrence and nobody reading; a duration counts from now', async () => {
      const project = await createProject(t)
      const announcements = await watchAnnouncements(t, project)
      const { fingerprint } = await occur(project)
      const until = new Date(Date.now() + 1500).toISOString()
      const ignored = await patched(fingerprint, { status: 'ignored', statusDetails: { ignoreUntil: until } })
      assert.deepEqual([ignored.status, ignored.statusDetails.ignoreUntil], ['ignored', until])
      // the announcement is published by the change itself: the portal's own job made it, no read of the group did
      const unignored = await eventually(async () => (await announcements()).find((n) => n.type === 'error.group.unignored'), 10_000, 'error.group.unignored')
      assert.equal(unignored.data.fingerprint, fingerprint)
      assert.ok(Date.now() >= Date.parse(until))
      const back = await groupOf(t, fingerprint)
      assert.deepEqual([back.status, back.unignored, back.statusDetails.ignoreUntil], ['unresolved', true, null])

      const before = Date.now()
      const forAnHour = await patched(fingerprint, { status: 'ignored', statusDetails: { ignoreDuration: 60, ignoreCount: 1000 } })
      const at = Date.parse(forAnHour.statusDetails.ignoreUntil)
      assert.ok(at >= before + HOUR_MS && at <= Date.now() + HOUR_MS, forAnHour.statusDetails.ignoreUntil)
      assert.equal(forAnHour.statusDetails.ignoreUntilCount, 1001)
      assert.equal((await groupOf(t, fingerprint)).status, 'ignored')
    })

    // One SQLite file has one writer process by design; PostgreSQL serves several portals at once.
    test('portals sharing one PostgreSQL database, read all the while, unignore a group whose time passed once', { skip: dialect !== 'postgres' }, async () => {
      const project = await createProject(t)
      const announcements = await watchAnnouncements(t, project)
      const { fingerprint } = await occur(project)
      const second = await startPortal(t.config, createLogger(t.config, new Writable({ write: (_chunk, _encoding, done) => done() })))
      try {
        await patched(fingerprint, { status: 'ignored', statusDetails: { ignoreUntil: new Date(Date.now() + 1000).toISOString() } })
        const readers = [t.url, second.url].map(async (base) => {
          for (;;) {
            const response = await fetch(`${base}/api/errors/groups?project_id=${project.id}`, { headers: { authorization: `Bearer ${t.viewerToken}` } })
            assert.equal(response.status, 200)
            const body = (await response.json()) as { data: { status: string }[] }
            if (body.data[0].status === 'unresolved') return
          }
        })
        await Promise.all(readers)
        // a pass of both portals' jobs after the change: neither changes it again
        await new Promise((resolve) => setTimeout(resolve, 1500))
        assert.deepEqual((await announcements()).map((n) => n.type), ['error.group.created', 'error.group.unignored'])
      } finally {
        await second.close()
      }
    })

    test('details that do not fit the status or each other are refused with a 400 naming them', async () => {
      const project = await createProject(t)
      const { fingerprint } = await occur(project)
      const refusals: [unknown, RegExp][] = [
        [{ status: 'ignored', statusDetails: { inNextRelease: true } }, /^body\.statusDetails\.inNextRelease: only with status resolved/],
        [{ status: 'resolved', statusDetails: { ignoreCount: 5 } }, /^body\.statusDetails\.ignoreCount: only with status ignored/],
        [{ status: 'unresolved', statusDetails: { ignoreUserCount: 5 } }, /^body\.statusDetails\.ignoreUserCount: only with status ignored/],
        [{ status: 'resolved', statusDetails: { inNextRelease: true, inRelease: '2.0' } }, /^body\.statusDetails\.inRelease: give inNextRelease or inRelease/],
        [{ status: 'ignored', statusDetails: { ignoreUntil: new Date(Date.now() - 1000).toISOString() } }, /^body\.statusDetails\.ignoreUntil: must be in the future/],
        [{ status: 'ignored', statusDetails: { ignoreUntil: new Date(Date.now() + HOUR_MS).toISOString(), ignoreDuration: 5 } }, /^body\.statusDetails\.ignoreDuration: give ignoreUntil or ignoreDuration/],
        [{ status: 'ignored', statusDetails: { ignoreCount: 0 } }, /^body\.statusDetails\.ignoreCount/],
        [{ status: 'ignored', statusDetails: { ignoreUntil: 'tomorrow' } }, /^body\.statusDetails\.ignoreUntil/],
        [{ status: 'resolved', statusDetails: { inNextRelease: false } }, /^body\.statusDetails\.inNextRelease/],
        [{ status: 'resolved', statusDetails: { inRelease: '' } }, /^body\.statusDetails\.inRelease/],
        [{ status: 'resolved', statusDetails: { inNextWeek: true } }, /^body\.statusDetails/],
      ]
      for (const [body, detail] of refusals) {
        const response = await patch(fingerprint, body)
        assert.equal(response.status, 400, JSON.stringify(body))
        assert.match(response.body.detail, detail, JSON.stringify(body))
      }
      assert.equal((await groupOf(t, fingerprint)).status, 'unresolved')
    })

    test('the list shows each group’s assignee and filters by a person, by whoever asks, and by nobody', async () => {
      const project = await createProject(t)
      const [ana, mine, nobodys] = await Promise.all(['AnaError', 'MyError', 'NobodysError'].map((name) => occur(project, undefined, 0, name)))
      const assign = async (fingerprint: string, assignee: string) =>
        assert.equal((await t.request('PUT', `/api/errors/groups/${fingerprint}/assignee`, { token: t.adminToken, body: { assignee } })).status, 200)
      const me = (await t.request('GET', '/api/me', { token: t.adminToken })).body.name
      await assign(ana.fingerprint, 'oidc|ana')
      await assign(mine.fingerprint, me)
      const list = async (query: string) => {
        const response = await t.request('GET', `/api/errors/groups?project_id=${project.id}${query}`, { token: t.adminToken })
        assert.equal(response.status, 200, response.text)
        return response.body.data.map((group: any) => [group.name, group.assignee]).sort()
      }
      assert.deepEqual(await list(''), [['AnaError', 'oidc|ana'], ['MyError', me], ['NobodysError', null]])
      assert.deepEqual(await list('&assignee=oidc%7Cana'), [['AnaError', 'oidc|ana']])
      assert.deepEqual(await list('&assigned=me'), [['MyError', me]])
      assert.deepEqual(await list('&assigned=nobody'), [['NobodysError', null]])
      assert.equal((await groupOf(t, nobodys.fingerprint)).assignee, null)
      for (const [query, detail] of [
        ['&assigned=someone', /^query\.assigned/],
        ['&assigned=me&assignee=ana', /^query\.assigned: give assignee or assigned, not both/],
        ['&assignee=', /^query\.assignee/],
      ] as const) {
        const refused = await t.request('GET', `/api/errors/groups?project_id=${project.id}${query}`, { token: t.viewerToken })
        assert.equal(refused.status, 400, query)
        assert.match(refused.body.detail, detail)
      }
    })
  })
}
