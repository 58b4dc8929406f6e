import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createAccessToken, createOrganization } from '../src/identity/store.ts'
import { API_KEY_CACHE_MS, ApiKeyPrincipalCache } from '../src/http/auth.ts'
import { sqliteInvalidations } from '../src/storage/sqlite/sqlite-invalidations.ts'
import { DIALECTS, createProject, createTestDatabase, event, ingest, startTestPortal, startTestPortalOn, type TestPortal } from './support/portal.ts'

for (const dialect of DIALECTS) {
  describe(`projects and API keys on ${dialect}`, () => {
    let t: TestPortal
    let otherOrgToken: string
    before(async () => {
      t = await startTestPortal(dialect)
      const org = await createOrganization(t.portal.ctx.storage.db, 'Other Org')
      otherOrgToken = (await createAccessToken(t.portal.ctx.storage.db, { orgId: org.id, role: 'admin', name: 'other admin' })).token
    })
    after(() => t.close())

    test('create, read, rename and list a project', async () => {
      const created = await t.request('POST', '/api/projects', { token: t.adminToken, body: { name: 'Checkout' } })
      assert.equal(created.status, 201)
      assert.match(created.body.id, /^prj_/)
      assert.equal(created.body.orgId, 'org_default')
      assert.equal(created.body.name, 'Checkout')
      const read = await t.request('GET', `/api/projects/${created.body.id}`, { token: t.viewerToken })
      assert.deepEqual(read.body, created.body)
      const renamed = await t.request('PATCH', `/api/projects/${created.body.id}`, { token: t.adminToken, body: { name: 'Checkout v2' } })
      assert.equal(renamed.status, 200)
      assert.equal(renamed.body.name, 'Checkout v2')
      assert.ok(renamed.body.updatedAt >= created.body.updatedAt)
      const list = await t.request('GET', '/api/projects', { token: t.viewerToken })
      assert.equal(list.status, 200)
      assert.ok(list.body.data.some((p: any) => p.id === created.body.id && p.name === 'Checkout v2'))
    })

    test('bad bodies get a 400 naming the field', async () => {
      const empty = await t.request('POST', '/api/projects', { token: t.adminToken, body: {} })
      assert.equal(empty.status, 400)
      assert.equal(empty.body.detail, 'body.name: required')
      const wrongType = await t.request('POST', '/api/projects', { token: t.adminToken, body: { name: 5 } })
      assert.equal(wrongType.status, 400)
      assert.match(wrongType.body.detail, /^body\.name: /)
      const extra = await t.request('POST', '/api/projects', { token: t.adminToken, body: { name: 'x', owner: 'y' } })
      assert.equal(extra.status, 400)
      assert.equal(extra.body.detail, 'body.owner: is not a known field')
      const broken = await t.request('POST', '/api/projects', { token: t.adminToken, body: '{"name":' })
      assert.equal(broken.status, 400)
      assert.equal(broken.body.code, 'invalid_json')
      const proto = await t.request('POST', '/api/projects', { token: t.adminToken, body: '{"name":"x","__proto__":{"admin":true}}' })
      assert.equal(proto.status, 400)
    })

    test('lists paginate with an opaque cursor and refuse a forged one', async () => {
      const org = await createOrganization(t.portal.ctx.storage.db, 'Paging Org')
      const token = (await createAccessToken(t.portal.ctx.storage.db, { orgId: org.id, role: 'admin', name: 'pager' })).token
      const ids: string[] = []
      for (let i = 0; i < 5; i++) ids.push((await t.request('POST', '/api/projects', { token, body: { name: `p${i}` } })).body.id)
      const first = await t.request('GET', '/api/projects?limit=2', { token })
      assert.deepEqual(first.body.data.map((p: any) => p.id), [ids[4], ids[3]])
      const second = await t.request('GET', `/api/projects?limit=2&cursor=${first.body.nextCursor}`, { token })
      assert.deepEqual(second.body.data.map((p: any) => p.id), [ids[2], ids[1]])
      const third = await t.request('GET', `/api/projects?limit=2&cursor=${second.body.nextCursor}`, { token })
      assert.deepEqual(third.body.data.map((p: any) => p.id), [ids[0]])
      assert.equal(third.body.nextCursor, null)
      const exact = await t.request('GET', '/api/projects?limit=5', { token })
      assert.equal(exact.body.data.length, 5)
      assert.equal(exact.body.nextCursor, null, 'a page that ends exactly at the limit is the last page')
      const forged = await t.request('GET', '/api/projects?cursor=bm90LWEtY3Vyc29y', { token })
      assert.equal(forged.status, 400)
      assert.equal(forged.body.code, 'invalid_cursor')
      const tooMany = await t.request('GET', '/api/projects?limit=501', { token })
      assert.equal(tooMany.status, 400)
      assert.match(tooMany.body.detail, /^query\.limit: /)
      const unknown = await t.request('GET', '/api/projects?sort=name', { token })
      assert.equal(unknown.status, 400)
      assert.equal(unknown.body.detail, 'query.sort: is not a known field')
    })

    test('soft-delete hides the project, stops its keys, and keeps its rows', async () => {
      const p = await createProject(t, 'to delete')
      assert.equal((await ingest(t, p, [event('log', { message: 'before delete' })])).status, 200)
      const del = await t.request('DELETE', `/api/projects/${p.id}`, { token: t.adminToken })
      assert.equal(del.status, 204)
      assert.equal((await t.request('GET', `/api/projects/${p.id}`, { token: t.adminToken })).status, 404)
      assert.equal((await t.request('PATCH', `/api/projects/${p.id}`, { token: t.adminToken, body: { name: 'x' } })).status, 404)
      assert.equal((await t.request('DELETE', `/api/projects/${p.id}`, { token: t.adminToken })).status, 404)
      assert.equal((await t.request('GET', `/api/projects/${p.id}/keys`, { token: t.adminToken })).status, 404)
      assert.equal((await t.request('GET', `/api/modules/logs/events?project_id=${p.id}`, { token: t.adminToken })).status, 404)
      const list = await t.request('GET', '/api/projects?limit=500', { token: t.adminToken })
      assert.ok(!list.body.data.some((row: any) => row.id === p.id))
      assert.equal((await ingest(t, p, [event('log', { message: 'after delete' })])).status, 401)
      const row = await t.portal.ctx.storage.db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow()
      assert.notEqual(row.deleted_at, null)
      const events = await (t.portal.ctx.storage.eventsOf('log_events').db as any).selectFrom('log_events').select('id').where('project_id', '=', p.id).execute()
      assert.equal(events.length, 1, 'the project’s events stay in the database')
    })

    test('an API key and its webhook secret are shown once, never listed, and stored only hashed or encrypted', async () => {
      const p = await createProject(t, 'keys')
      const created = await t.request('POST', `/api/projects/${p.id}/keys`, { token: t.adminToken, body: { name: 'ci' } })
      assert.equal(created.status, 201)
      assert.match(created.body.key, /^pk_/)
      assert.match(created.body.webhookSecret, /^whsec_/)
      assert.ok(created.body.key.startsWith(created.body.prefix))
      const list = await t.request('GET', `/api/projects/${p.id}/keys`, { token: t.adminToken })
      assert.equal(list.status, 200)
      const listed = list.body.data.find((k: any) => k.id === created.body.id)
      assert.deepEqual(Object.keys(listed).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix', 'projectId', 'revokedAt', 'scopes'])
      assert.ok(!list.text.includes(created.body.key) && !list.text.includes(created.body.webhookSecret))
      const stored = await t.portal.ctx.storage.db.selectFrom('api_keys').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow()
      assert.ok(!JSON.stringify(stored).includes(created.body.key))
      assert.ok(!JSON.stringify(stored).includes(created.body.webhookSecret))
      assert.ok(!t.logs.join('').includes(created.body.key) && !t.logs.join('').includes(created.body.webhookSecret), 'secrets never reach the log')
    })

    test('revoking a key is recorded, and the key is refused from then on', async () => {
      const p = await createProject(t, 'revoke')
      assert.equal((await ingest(t, p, [event('log', { message: 'before revoke' })])).status, 200, 'the key in use, so its principal is kept')
      const revoked = await t.request('DELETE', `/api/projects/${p.id}/keys/${p.keyId}`, { token: t.adminToken })
      assert.equal(revoked.status, 204)
      const list = await t.request('GET', `/api/projects/${p.id}/keys`, { token: t.adminToken })
      assert.notEqual(list.body.data.find((k: any) => k.id === p.keyId).revokedAt, null)
      assert.equal((await ingest(t, p, [])).status, 401)
      assert.equal((await t.request('DELETE', `/api/projects/${p.id}/keys/${p.keyId}`, { token: t.adminToken })).status, 204)
      assert.equal((await t.request('DELETE', `/api/projects/${p.id}/keys/key_missing`, { token: t.adminToken })).status, 404)
    })

    test('management actions land in the project’s audit module with the acting token as actor', async () => {
      const p = await createProject(t, 'audited')
      await t.request('PATCH', `/api/projects/${p.id}`, { token: t.adminToken, body: { name: 'audited 2' } })
      await t.request('DELETE', `/api/projects/${p.id}/keys/${p.keyId}`, { token: t.adminToken })
      const audit = await t.request('GET', `/api/modules/audit/events?project_id=${p.id}`, { token: t.viewerToken })
      assert.equal(audit.status, 200)
      const actions = audit.body.data.map((e: any) => e.data.action).sort()
      assert.deepEqual(actions, ['api_key.created', 'api_key.revoked', 'project.created', 'project.updated'])
      for (const entry of audit.body.data) assert.match(entry.data.actor, /^tok_/)
    })

    test('a viewer reads but cannot write; an API key cannot read or manage', async () => {
      const p = await createProject(t, 'roles')
      const viewerWrite = await t.request('POST', '/api/projects', { token: t.viewerToken, body: { name: 'x' } })
      assert.equal(viewerWrite.status, 403)
      assert.equal(viewerWrite.body.code, 'admin_required')
      assert.equal((await t.request('POST', `/api/projects/${p.id}/keys`, { token: t.viewerToken, body: {} })).status, 403)
      assert.equal((await t.request('DELETE', `/api/projects/${p.id}`, { token: t.viewerToken })).status, 403)
      assert.equal((await t.request('GET', `/api/projects/${p.id}`, { token: t.viewerToken })).status, 200)
      const keyRead = await t.request('GET', '/api/projects', { token: p.key })
      assert.equal(keyRead.status, 403)
      assert.equal(keyRead.body.code, 'access_token_required')
      assert.equal((await t.request('GET', `/api/modules/logs/events?project_id=${p.id}`, { token: p.key })).status, 403)
    })

    test('another organisation sees 404 for every project resource, never 403', async () => {
      const p = await createProject(t, 'private')
      for (const [method, path, body] of [
        ['GET', `/api/projects/${p.id}`],
        ['PATCH', `/api/projects/${p.id}`, { name: 'stolen' }],
        ['DELETE', `/api/projects/${p.id}`],
        ['GET', `/api/projects/${p.id}/keys`],
        ['POST', `/api/projects/${p.id}/keys`, {}],
        ['DELETE', `/api/projects/${p.id}/keys/${p.keyId}`],
        ['GET', `/api/modules/logs/events?project_id=${p.id}`],
        ['GET', `/api/modules/audit/status?project_id=${p.id}`],
      ] as [string, string, unknown?][]) {
        const res = await t.request(method, path, { token: otherOrgToken, body })
        assert.equal(res.status, 404, `${method} ${path}`)
      }
      const list = await t.request('GET', '/api/projects', { token: otherOrgToken })
      assert.ok(!list.body.data.some((row: any) => row.id === p.id))
      assert.equal((await ingest(t, p, [])).status, 200, 'the key still works for its own project')
    })
  })
}

for (const dialect of DIALECTS) {
  describe(`API keys across two portals on one ${dialect} database`, () => {
    test('a key revoked or a project deleted through one portal is refused by the other within API_KEY_CACHE_MS', async () => {
      const database = await createTestDatabase(dialect, { migrated: true })
      // Two portals of one process on one SQLite file share its rows; DuckDB's event store is one portal's.
      const env: Record<string, string> = dialect === 'sqlite' ? { EVENT_STORE: 'sqlite' } : {}
      const first = await startTestPortalOn(dialect, database, env)
      const second = await startTestPortalOn(dialect, database, env)
      try {
        const revoked = await createProject(first, 'revoked elsewhere')
        const deleted = await createProject(first, 'deleted elsewhere')
        for (const p of [revoked, deleted]) assert.equal((await ingest(second, p, [event('log', { message: 'kept' })])).status, 200)
        assert.equal((await first.request('DELETE', `/api/projects/${revoked.id}/keys/${revoked.keyId}`, { token: first.adminToken })).status, 204)
        assert.equal((await first.request('DELETE', `/api/projects/${deleted.id}`, { token: first.adminToken })).status, 204)
        // The second portal may still take them until its kept principals expire, never after.
        await new Promise((resolve) => setTimeout(resolve, API_KEY_CACHE_MS + 100))
        for (const p of [revoked, deleted]) assert.equal((await ingest(second, p, [event('log', { message: 'refused' })])).status, 401)
      } finally {
        await second.close()
        await first.close()
        await database.drop()
      }
    })
  })
}

describe('kept API-key principals', () => {
  const principal = { kind: 'apiKey' as const, keyId: 'key_1', orgId: 'org_1', projectId: 'prj_1', webhookSecretEncrypted: 'sealed', projectEventsPerSecond: null, scopes: ['ingest' as const], projectNumber: 1 }

  test('a found key is looked up once until it expires; an unknown key every time', async () => {
    const cache = new ApiKeyPrincipalCache(sqliteInvalidations(':memory:'), 50)
    let loads = 0
    const found = async () => (loads++, principal)
    assert.equal(await cache.lookup('a', found), principal)
    assert.equal(await cache.lookup('a', found), principal)
    assert.equal(loads, 1)
    await new Promise((resolve) => setTimeout(resolve, 60))
    await cache.lookup('a', found)
    assert.equal(loads, 2, 'looked up again once expired')
    let misses = 0
    const unknown = async () => void misses++
    assert.equal(await cache.lookup('b', unknown), undefined)
    assert.equal(await cache.lookup('b', unknown), undefined)
    assert.equal(misses, 2)
  })

  test('forget drops what is kept, and a lookup running when it is called is not kept', async () => {
    const cache = new ApiKeyPrincipalCache(sqliteInvalidations(':memory:'), 60_000)
    let loads = 0
    const found = async () => (loads++, principal)
    await cache.lookup('a', found)
    await cache.forget()
    await cache.lookup('a', found)
    assert.equal(loads, 2)
    let release!: () => void
    const overtaken = cache.lookup('c', () => new Promise((resolve) => (release = () => resolve(principal))))
    await cache.forget()
    release()
    assert.equal(await overtaken, principal)
    await cache.lookup('c', found)
    assert.equal(loads, 3, 'what the overtaken lookup read was not kept')
  })
})
