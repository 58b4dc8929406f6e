import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { DIALECTS, createProject, event, type TestPortal, type TestProject } from '../../test/support/portal.ts'
import { ingestAll, read, startReadsPortal } from '../../test/support/module-reads.ts'
import { PREVIOUS_COMMIT, RELEASE, RELEASE_COMMIT, SUSPECT_COMMIT, seedCheckout } from '../../test/ui/seed-what-changed.ts'
import { ERROR_STACK, ago } from '../../test/ui/seed.ts'

for (const dialect of DIALECTS) {
  describe(`suspect commits on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    let fingerprint: string
    before(async () => {
      t = await startReadsPortal(dialect)
      project = await seedCheckout(t)
      const groups = await read(t, `/api/errors/groups?project_id=${project.id}`)
      fingerprint = groups.data[0].fingerprint
    })
    after(() => t.close())

    test('the commits between the previous deploy and the first release, those touching an in-app file first', async () => {
      const body = await read(t, `/api/errors/groups/${fingerprint}/suspect-commits`)
      assert.equal(body.release, RELEASE)
      assert.deepEqual([body.previousDeploy.commit, body.releaseDeploy.commit, body.basis], [PREVIOUS_COMMIT, RELEASE_COMMIT, 'commits'])
      // after the previous deploy's commit, up to the release's: not the one before, not the one after
      assert.deepEqual(body.data.map((c: any) => c.commit), [SUSPECT_COMMIT, RELEASE_COMMIT, 'bbb2222bbbb'])
      assert.deepEqual(body.data[0].matchedFiles, ['src/billing/invoice.ts'])
      assert.deepEqual([body.data[0].author, body.data[0].branch, body.data[0].message], ['erin', 'main', 'Invoice totals from the quote'])
      assert.ok(body.inAppFiles.includes('/srv/shop/src/billing/invoice.ts'), body.inAppFiles.join())
      assert.deepEqual([body.data[0].url, body.compareUrl], [null, null], 'no links until an admin sets the code host')
    })

    test('an admin sets the code host (audited); commit and compare links follow GitHub’s, GitLab’s and Gitea’s paths', async () => {
      const viewer = await t.request('PUT', `/api/modules/repository/links?project_id=${project.id}`, { token: t.viewerToken, body: { provider: 'github', baseUrl: 'https://github.com' } })
      assert.equal(viewer.status, 403)
      const bad = await t.request('PUT', `/api/modules/repository/links?project_id=${project.id}`, { token: t.adminToken, body: { provider: 'svn', baseUrl: 'https://x.example' } })
      assert.equal(bad.status, 400)
      assert.match(bad.body.detail, /provider/)
      for (const [provider, baseUrl, commit, compare] of [
        ['gitlab', 'https://gitlab.example.com/', `https://gitlab.example.com/acme/checkout/-/commit/${SUSPECT_COMMIT}`, `https://gitlab.example.com/acme/checkout/-/compare/${PREVIOUS_COMMIT}...${RELEASE_COMMIT}`],
        ['gitea', 'https://git.example.org', `https://git.example.org/acme/checkout/commit/${SUSPECT_COMMIT}`, `https://git.example.org/acme/checkout/compare/${PREVIOUS_COMMIT}...${RELEASE_COMMIT}`],
        ['github', 'https://github.com', `https://github.com/acme/checkout/commit/${SUSPECT_COMMIT}`, `https://github.com/acme/checkout/compare/${PREVIOUS_COMMIT}...${RELEASE_COMMIT}`],
      ]) {
        const set = await t.request('PUT', `/api/modules/repository/links?project_id=${project.id}`, { token: t.adminToken, body: { provider, baseUrl } })
        assert.equal(set.status, 200, set.text)
        const body = await read(t, `/api/errors/groups/${fingerprint}/suspect-commits`)
        assert.deepEqual([body.data[0].url, body.compareUrl], [commit, compare])
      }
      const links = await read(t, `/api/modules/repository/links?project_id=${project.id}`)
      assert.equal(links.commitUrl, 'https://github.com/{repo}/commit/{commit}')
      const audit = await read(t, `/api/modules/audit/events?project_id=${project.id}&action=repository.links_updated`)
      assert.equal(audit.data.length, 3)
      assert.deepEqual(audit.data[0].data.metadata.to, { provider: 'github', baseUrl: 'https://github.com', repo: null })
      assert.equal(links.repo, 'acme/checkout', 'the repository most recently pushed to')
    })

    test('without the deploys’ commits among the repository events, the commits pushed between the two deploys', async () => {
      const other = await createProject(t, 'by time')
      await ingestAll(t, other, [
        event('deploy', { service: 'api', version: '1.0.0', environment: 'production', commit: 'not-in-events-1' }, ago(300)),
        event('deploy', { service: 'api', version: '1.1.0', environment: 'production', commit: 'not-in-events-2' }, ago(100)),
        event('repository', { repo: 'acme/api', branch: 'main', commit: 'before000000', author: 'a' }, ago(400)),
        event('repository', { repo: 'acme/api', branch: 'main', commit: 'between00000', author: 'b' }, ago(200)),
        event('repository', { repo: 'acme/api', branch: 'main', commit: 'after0000000', author: 'c' }, ago(50)),
      ])
      const capture = await t.request('POST', '/api/errors/capture', { token: other.key, body: { name: 'Error', message: 'boom', stack: ERROR_STACK, release: '1.1.0' } })
      assert.equal(capture.status, 201)
      const body = await read(t, `/api/errors/groups/${capture.body.fingerprint}/suspect-commits`)
      assert.deepEqual([body.basis, body.data.map((c: any) => c.commit)], ['time', ['between00000']])
    })

    test('a group whose release has no deploy says why there are no suspects', async () => {
      const capture = await t.request('POST', '/api/errors/capture', { token: project.key, body: { name: 'RangeError', message: 'no deploy', release: 'checkout@9.9.9' } })
      const body = await read(t, `/api/errors/groups/${capture.body.fingerprint}/suspect-commits`)
      assert.deepEqual([body.basis, body.data], ['none', []])
      assert.match(body.reason, /No deploy of checkout@9\.9\.9/)
    })
  })
}
