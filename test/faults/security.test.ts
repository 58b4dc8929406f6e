import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import crypto, { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { syncBuiltinESMExports } from 'node:module'
import pg from 'pg'
import type { PortalContext } from '../../src/context.ts'
import { constantTimeEqual, createSecretBox, hmacSha256Hex } from '../../src/identity/secrets.ts'
import { DEFAULT_ORG_ID } from '../../src/identity/store.ts'
import { verifyIngestSignature } from '../../src/ingest/signature.ts'
import { DIALECTS, createTestDatabase, event, ingest, requester, type PortalClient, type TestDatabase } from '../support/portal.ts'
import { killPortal, runPortalCli, spawnPortal, type PortalProcess } from '../support/process.ts'
import { FAULTS_ENV, createOrganisationWithCli, isWrite, operationsOf, pathOf, seedOrganisation, validBodyOf, type Operation, type Organisation } from './organisations.ts'

/** The forms a credential could leak in: as is, without its type prefix, URL-encoded, base64, base64url and hex of its bytes. */
function leakForms(secret: string): string[] {
  const bytes = Buffer.from(secret)
  const bare = secret.slice(secret.indexOf('_') + 1)
  return [secret, bare, encodeURIComponent(bare), bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')]
}

/** The credentials among `secrets` found in `text` in any of their leak forms. */
function leaked(text: string, secrets: Iterable<string>): string[] {
  return [...secrets].filter((secret) => leakForms(secret).some((form) => text.includes(form)))
}

const randomToken = (prefix: string) => `${prefix}_${randomBytes(32).toString('base64url')}`

for (const dialect of DIALECTS) {
  describe(`security on ${dialect}: two organisations, each with everything`, () => {
    let database: TestDatabase
    let portal: PortalProcess
    let env: Record<string, string>
    let metricsToken: string
    let client: PortalClient
    let operations: Operation[]
    let a: Organisation
    let b: Organisation
    /** every credential the portal handed out or was given */
    const secrets = new Set<string>()
    /** every answer of a read, a refusal or an error, for the search for credentials */
    const answers: string[] = []

    /** A request whose answer must not carry any credential. */
    async function send(method: string, url: string, options: { token?: string; authorization?: string; body?: unknown; headers?: Record<string, string> } = {}) {
      const headers: Record<string, string> = { ...options.headers }
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
      if (options.authorization !== undefined) headers.authorization = options.authorization
      if (options.body !== undefined) headers['content-type'] ??= 'application/json'
      const response = await fetch(portal.url + url, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) })
      const text = await response.text()
      answers.push(text)
      // JSON answers are parsed; the Prometheus text of /metrics is searched as text only
      const isJson = /json/.test(response.headers.get('content-type') ?? '')
      return { status: response.status, text, body: text && isJson ? JSON.parse(text) : undefined }
    }

    /** Sends the operation aimed at `org`'s resources, with a valid body so that only the credential decides. */
    const call = (operation: Operation, org: Organisation, credential: { token?: string; authorization?: string }, query?: Record<string, string>) =>
      send(operation.method, pathOf(operation, org, undefined, query), { ...credential, body: operation.hasBody ? validBodyOf(operation, org) : undefined })

    const remember = (org: Organisation) => {
      for (const secret of [org.adminToken, org.viewerToken, org.endpoint.secret]) secrets.add(secret)
      for (const project of [org.project, org.sibling]) secrets.add(project.key).add(project.webhookSecret)
    }

    before(async () => {
      database = await createTestDatabase(dialect)
      const adminToken = randomToken('pat')
      // METRICS_TOKEN set, so that GET /metrics is served and refuses every other bearer like the rest
      metricsToken = randomToken('metrics')
      secrets.add(metricsToken)
      env = { ...FAULTS_ENV, DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: adminToken, METRICS_TOKEN: metricsToken }
      // trace: the most the portal ever logs, so that the search below covers every log line it can write
      portal = await spawnPortal({ ...env, LOG_LEVEL: 'trace' })
      client = { request: requester(portal.url), adminToken }
      const viewerToken = await runPortalCli(env, ['token', 'create', '--role', 'viewer'])
      a = await seedOrganisation(client, { id: DEFAULT_ORG_ID, adminToken, viewerToken })
      b = await seedOrganisation(client, await createOrganisationWithCli(env, 'Second team'))
      remember(a)
      remember(b)
      const document = await client.request('GET', '/api/openapi.json', { token: adminToken })
      operations = operationsOf(document.body)
    })
    after(async () => {
      console.log(`# security on ${dialect}: ${answers.length} requests checked`)
      await killPortal(portal)
      await database.drop()
    })

    test('the second organisation came from the CLI and sees only its own projects', async () => {
      assert.notEqual(b.id, a.id)
      const listed = await send('GET', '/api/projects?limit=500', { token: b.viewerToken })
      assert.deepEqual(listed.body.data.map((project: any) => project.id).sort(), [b.project.id, b.sibling.id].sort())
    })

    test('every route but health refuses a missing, malformed, unknown or altered bearer with 401', async () => {
      assert.deepEqual(operations.filter((operation) => operation.security === 'public').map((operation) => operation.template), ['/api/health'])
      const refusedCredentials = [
        {},
        { authorization: 'Bearer' },
        { authorization: 'Basic dXNlcjpwYXNz' },
        { authorization: a.adminToken },
        { token: randomToken('pat') },
        { token: randomToken('pk') },
        { token: `${a.adminToken}x` },
        { token: a.project.webhookSecret },
        { token: 'eyJhbGciOiJub25lIn0.eyJvcmdfaWQiOiJvcmdfZGVmYXVsdCJ9.' },
      ]
      for (const operation of operations.filter((operation) => operation.security !== 'public')) {
        for (const credential of refusedCredentials) {
          const answer = await call(operation, a, credential)
          assert.equal(answer.status, 401, `${operation.method} ${operation.template} with ${JSON.stringify(credential).slice(0, 40)}: ${answer.text}`)
          assert.match(answer.body.code, /^(missing_token|invalid_token)$/)
        }
      }
    })

    test('ingest refuses a missing signature, and one made with any other secret or over other bytes, with 403', async () => {
      const body = JSON.stringify({ events: [event('log', { message: 'signature probe' })] })
      const signedWith = (secret: string, bytes = body) => ({ 'x-service-signature': hmacSha256Hex(secret, bytes) })
      const refused: [Record<string, string>, string][] = [
        [{}, 'missing_signature'],
        [{ 'x-service-signature': '' }, 'missing_signature'],
        [{ 'x-service-signature': 'ab'.repeat(32) }, 'invalid_signature'],
        [{ 'x-service-signature': hmacSha256Hex(a.project.webhookSecret, body).slice(0, 63) }, 'invalid_signature'],
        [signedWith(a.project.webhookSecret, `${body} `), 'invalid_signature'],
        [signedWith(a.sibling.webhookSecret), 'invalid_signature'],
        [signedWith(b.project.webhookSecret), 'invalid_signature'],
        [signedWith(a.endpoint.secret), 'invalid_signature'],
        [signedWith(a.project.key), 'invalid_signature'],
      ]
      for (const [headers, code] of refused) {
        const answer = await send('POST', '/api/ingest', { token: a.project.key, body: JSON.parse(body), headers })
        assert.equal(answer.status, 403, `${JSON.stringify(headers)}: ${answer.text}`)
        assert.equal(answer.body.code, code)
      }
      assert.equal((await ingest(client, a.project, body)).status, 200)
      const stored = await send('GET', `/api/modules/logs/events?project_id=${a.project.id}&q=signature%20probe`, { token: a.viewerToken })
      assert.equal(stored.body.data.length, 1, 'only the correctly signed batch is stored')
    })

    test('a viewer cannot write: every POST, PATCH and DELETE answers 403 and changes nothing', async () => {
      for (const operation of operations.filter(isWrite)) {
        for (const org of [a, b]) {
          const answer = await call(operation, org, { token: org.viewerToken })
          assert.equal(answer.status, 403, `${operation.method} ${operation.template}: ${answer.text}`)
          assert.match(answer.body.code, /^(admin_required|api_key_required)$/)
        }
      }
      await assertUntouched(a)
    })

    test('an API key cannot read or manage: every route for access tokens answers 403', async () => {
      for (const operation of operations.filter((operation) => operation.security === 'accessToken')) {
        const answer = await call(operation, a, { token: a.project.key })
        assert.equal(answer.status, 403, `${operation.method} ${operation.template}: ${answer.text}`)
        assert.equal(answer.body.code, 'access_token_required')
      }
      // the OpenAPI document is the one read open to both (spec 4)
      assert.deepEqual(operations.filter((operation) => operation.security === 'any').map((operation) => operation.template), ['/api/openapi.json'])
    })

    test('another organisation gets 404, never 403 or 200, for every route naming a resource of this one', async () => {
      const namesResource = (operation: Operation) =>
        operation.template.includes('{') || operation.queryParameters.includes('project_id') || (operation.hasBody && 'projectId' in validBodyOf(operation, a))
      const checked = operations.filter((operation) => operation.security === 'accessToken' && namesResource(operation))
      assert.ok(checked.length >= 50, `only ${checked.length} routes name a resource`)
      for (const operation of checked) {
        for (const token of isWrite(operation) ? [b.adminToken] : [b.adminToken, b.viewerToken]) {
          const answer = await call(operation, a, { token })
          assert.equal(answer.status, 404, `${operation.method} ${operation.template} by the other organisation: ${answer.text}`)
        }
      }
      // nor can its admin pull this organisation's error group into one of its own
      const merge = await send('POST', `/api/errors/groups/${b.fingerprints[0]}/merge`, { token: b.adminToken, body: { fingerprints: [a.fingerprints[0]] } })
      assert.equal(merge.status, 404, merge.text)
      await assertUntouched(a)
    })

    test('project-scoped reads refuse another project’s resources with 404, and a key writes only into its own project', async () => {
      const scoped = operations.filter((operation) => operation.template.includes('{') && operation.requiredQuery.includes('project_id'))
      assert.ok(scoped.length >= 4, scoped.map((operation) => operation.template).join())
      for (const operation of scoped) {
        const answer = await call(operation, a, { token: a.adminToken }, { project_id: a.sibling.id })
        assert.equal(answer.status, 404, `${operation.template} under the sibling project: ${answer.text}`)
      }
      const otherProjectsKey = await send('DELETE', `/api/projects/${a.sibling.id}/keys/${a.project.keyId}`, { token: a.adminToken })
      assert.equal(otherProjectsKey.status, 404, otherProjectsKey.text)
      const siblingKeys = await send('GET', `/api/projects/${a.sibling.id}/keys`, { token: a.adminToken })
      assert.deepEqual(siblingKeys.body.data.map((key: any) => key.id), [a.sibling.keyId])

      const intoSibling = await ingest(client, { ...a.project, webhookSecret: a.sibling.webhookSecret }, [event('log', { message: 'misdirected' })])
      assert.equal(intoSibling.status, 403, 'project A’s key signed with project B’s secret')
      assert.equal((await ingest(client, a.project, [event('log', { message: 'own project only' })])).status, 200)
      const captured = await send('POST', '/api/errors/capture', { token: a.project.key, body: { name: 'OwnProjectOnly', message: 'x' } })
      for (const module of ['/api/modules/logs/events', '/api/errors/groups']) {
        const read = await send('GET', `${module}?project_id=${a.sibling.id}`, { token: a.adminToken })
        assert.equal(read.status, 200, read.text)
        assert.deepEqual(read.body.data, [], `${module}: the sibling project holds nothing of project A`)
      }
      assert.equal((await send('GET', `/api/errors/groups/${captured.body.groupFingerprint}`, { token: b.adminToken })).status, 404)
    })

    test('the ingest signature is compared in constant time (crypto.timingSafeEqual)', (t) => {
      // A statistical timing measurement would be flaky on a shared machine, so this checks the
      // mechanism instead: the compare the ingest path uses goes through crypto.timingSafeEqual.
      const timingSafeEqual = t.mock.method(crypto, 'timingSafeEqual')
      syncBuiltinESMExports()
      try {
        assert.equal(constantTimeEqual('a'.repeat(64), 'a'.repeat(64)), true)
        assert.equal(constantTimeEqual('a'.repeat(64), `${'a'.repeat(63)}b`), false)
        assert.equal(constantTimeEqual('a'.repeat(64), 'a'.repeat(63)), false)
        assert.equal(constantTimeEqual('', 'a'), false)
        assert.equal(timingSafeEqual.mock.callCount(), 4)

        const secretBox = createSecretBox(randomBytes(32))
        const ctx = { secretBox } as PortalContext
        const sealed = secretBox.seal('whsec_probe')
        const body = Buffer.from('{"events":[]}')
        verifyIngestSignature(ctx, sealed, hmacSha256Hex('whsec_probe', body), body)
        for (const wrong of ['ab'.repeat(32), hmacSha256Hex('whsec_probe', body).slice(1), hmacSha256Hex('whsec_other', body)]) {
          assert.throws(() => verifyIngestSignature(ctx, sealed, wrong, body), { code: 'invalid_signature' })
        }
        assert.equal(timingSafeEqual.mock.callCount(), 8, 'each verification compares once, through timingSafeEqual')
      } finally {
        timingSafeEqual.mock.restore()
        syncBuiltinESMExports()
      }
    })

    test('no token, key or secret is stored in clear, base64 or hex in the database', async () => {
      const dump = dialect === 'sqlite' ? sqliteFiles(database) : await postgresDump(database.url)
      assert.ok(dump.includes(a.project.id) && dump.includes(b.endpoint.id), 'the dump holds the seeded rows')
      assert.deepEqual(leaked(dump, secrets), [])
    })

    test('credentials never reach the log (at trace level), list reads or error bodies', async () => {
      // more credentials, made the ways an operator makes them
      for (const org of [a, b]) {
        const rotated = await client.request('POST', `/api/webhooks/endpoints/${org.endpoint.id}/rotate`, { token: org.adminToken })
        assert.equal(rotated.status, 200, rotated.text)
        secrets.add(rotated.body.secret)
        const key = await client.request('POST', `/api/projects/${org.sibling.id}/keys`, { token: org.adminToken, body: { name: 'short-lived' } })
        secrets.add(key.body.key).add(key.body.webhookSecret)
        assert.equal((await send('DELETE', `/api/projects/${org.sibling.id}/keys/${key.body.id}`, { token: org.adminToken })).status, 204)
        assert.equal((await send('GET', '/api/me', { token: key.body.key })).status, 401, 'a revoked key')
      }
      // credentials where they do not belong: query strings, bodies, unknown routes
      for (const [name, value] of [['token', a.adminToken], ['api_key', a.project.key], ['access_token', b.adminToken], ['secret', a.endpoint.secret]]) {
        for (const url of ['/api/projects', `/api/modules/logs/events?project_id=${a.project.id}`, '/api/no-such-route', '/api/health']) {
          const answer = await send('GET', `${url}${url.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}`, { token: a.viewerToken })
          assert.ok(answer.status < 500, answer.text)
        }
        await send('POST', `/api/ingest?${name}=${encodeURIComponent(value)}`, { token: a.project.key, body: { events: [] }, headers: { 'x-service-signature': 'ab'.repeat(32) } })
        await send('POST', '/api/projects', { token: a.adminToken, body: { name: 5, [name]: value } })
      }
      // every list and read there is
      for (const operation of operations.filter((operation) => !isWrite(operation))) {
        for (const org of [a, b]) {
          const token = operation.security === 'metricsToken' ? metricsToken : org.viewerToken
          assert.equal((await call(operation, org, { token })).status, 200, `${operation.template}`)
        }
      }

      const log = portal.output()
      // request lines are in the log, so the search below means something; the credential in them is not
      assert.match(log, /"url":"\/api\/projects\?token=\[redacted\]"/)
      assert.deepEqual(leaked(log, secrets), [], 'credentials in the log')
      assert.deepEqual(leaked(answers.join('\n'), secrets), [], 'credentials in reads, refusals or error bodies')
    })

    /** The organisation's resources are as seeding left them. */
    async function assertUntouched(org: Organisation) {
      const project = await send('GET', `/api/projects/${org.project.id}`, { token: org.adminToken })
      assert.equal(project.body.name, `${org.id} main`)
      const keys = await send('GET', `/api/projects/${org.project.id}/keys`, { token: org.adminToken })
      assert.deepEqual(keys.body.data.map((key: any) => [key.id, key.revokedAt ?? null]), [[org.project.keyId, null]])
      const endpoint = await send('GET', `/api/webhooks/endpoints/${org.endpoint.id}`, { token: org.adminToken })
      assert.equal(endpoint.status, 200)
      assert.equal(endpoint.body.description, '')
      for (const fingerprint of org.fingerprints) {
        const group = await send('GET', `/api/errors/groups/${fingerprint}`, { token: org.adminToken })
        assert.equal(group.body.status, 'unresolved')
        assert.equal(group.body.fingerprint, fingerprint, 'not merged')
      }
    }
  })
}

/** The SQLite database's files as they are on disk (main file, WAL, shared memory), as one text. */
function sqliteFiles(database: TestDatabase): string {
  const files = fs.readdirSync(database.dataDir).filter((name) => name.startsWith('portal.db'))
  assert.ok(files.includes('portal.db'))
  return files.map((name) => fs.readFileSync(path.join(database.dataDir, name)).toString('latin1')).join('\n')
}

/** Every row of every table of the PostgreSQL database, as text. */
async function postgresDump(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const tables = await client.query<{ name: string }>(`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)
    assert.ok(tables.rows.length > 10)
    const dumps: string[] = []
    for (const { name } of tables.rows) {
      const rows = await client.query<{ row: string }>(`select t::text as row from "${name}" t`)
      dumps.push(...rows.rows.map((row) => row.row))
    }
    return dumps.join('\n')
  } finally {
    await client.end()
  }
}
