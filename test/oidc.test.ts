import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { CHECK_REUSE_MS } from '../src/health/routes.ts'
import { createOrganization } from '../src/identity/store.ts'
import { DIALECTS, startTestPortal, type TestPortal } from './support/portal.ts'

const ISSUER = 'https://id.example.test/'
const AUDIENCE = 'observability-portal'

for (const dialect of DIALECTS) {
  describe(`OIDC bearers (AUTH_JWKS_URL) on ${dialect}`, () => {
    let t: TestPortal
    let jwks: http.Server
    let jwksUp = true
    let sign: (claims: Record<string, unknown>, options?: { expiresIn?: string; issuer?: string }) => Promise<string>
    let otherOrg: string

    before(async () => {
      const { publicKey, privateKey } = await generateKeyPair('RS256')
      const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
      jwks = http.createServer((_request, response) => {
        if (!jwksUp) return void response.writeHead(500).end()
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }))
      })
      await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve))
      const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`
      sign = (claims, options = {}) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer(options.issuer ?? ISSUER)
          .setAudience(AUDIENCE)
          .setSubject('user-42')
          .setIssuedAt()
          .setExpirationTime(options.expiresIn ?? '5m')
          .sign(privateKey)
      t = await startTestPortal(dialect, { AUTH_JWKS_URL: url, AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE })
      otherOrg = (await createOrganization(t.portal.ctx.storage.db, 'OIDC org')).id
    })
    after(async () => {
      jwks.close() // first: a server left listening keeps the file's process, and the whole run, waiting
      await t?.close()
    })

    test('an admin JWT manages projects in the organisation its claim names', async () => {
      const token = await sign({ org_id: otherOrg, role: 'admin' })
      const created = await t.request('POST', '/api/projects', { token, body: { name: 'from oidc' } })
      assert.equal(created.status, 201)
      assert.equal(created.body.orgId, otherOrg)
      const audit = await t.request('GET', `/api/modules/audit/events?project_id=${created.body.id}`, { token })
      assert.equal(audit.body.data[0].data.actor, 'oidc:user-42')
      const fromDefault = await t.request('GET', `/api/projects/${created.body.id}`, { token: t.adminToken })
      assert.equal(fromDefault.status, 404, 'organisations stay apart')
    })

    test('a viewer JWT reads but cannot write', async () => {
      const token = await sign({ org_id: otherOrg, role: 'viewer' })
      assert.equal((await t.request('GET', '/api/projects', { token })).status, 200)
      assert.equal((await t.request('POST', '/api/projects', { token, body: { name: 'x' } })).status, 403)
    })

    test('expired, foreign-issuer, claim-less and unknown-organisation JWTs get 401 naming why', async () => {
      const cases: [Promise<string>, RegExp][] = [
        [sign({ org_id: otherOrg, role: 'admin' }, { expiresIn: '-1m' }), /exp/],
        [sign({ org_id: otherOrg, role: 'admin' }, { issuer: 'https://evil.example/' }), /iss/],
        [sign({ role: 'admin' }), /org_id/],
        [sign({ org_id: otherOrg, role: 'owner' }), /role must be admin or viewer/],
        [sign({ org_id: 'org_nope', role: 'admin' }), /does not exist/],
      ]
      for (const [token, reason] of cases) {
        const res = await t.request('GET', '/api/projects', { token: await token })
        assert.equal(res.status, 401)
        assert.equal(res.body.code, 'invalid_token')
        assert.match(res.body.detail, reason)
      }
    })

    test('health includes the issuer’s JWKS endpoint and turns 503 when it fails', async () => {
      const up = await t.request('GET', '/api/health')
      assert.equal(up.status, 200)
      assert.equal(up.body.checks.identityProvider.status, 'ok')
      jwksUp = false
      try {
        await sleep(CHECK_REUSE_MS) // the last result answers for up to a second
        const down = await t.request('GET', '/api/health')
        assert.equal(down.status, 503)
        assert.equal(down.body.checks.identityProvider.status, 'failing')
        assert.equal(down.body.checks.database.status, 'ok')
      } finally {
        jwksUp = true
      }
    })
  })
}
