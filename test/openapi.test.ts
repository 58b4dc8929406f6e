import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import { modules } from '../src/modules/registry.ts'
import { DIALECTS, createProject, event, ingest, startTestPortal, type TestPortal, type TestResponse } from './support/portal.ts'
import { documentConformance } from './support/openapi-conformance.ts'

for (const dialect of DIALECTS) {
  describe(`OpenAPI document on ${dialect}`, () => {
    let t: TestPortal
    let document: any
    before(async () => {
      t = await startTestPortal(dialect)
      document = (await t.request('GET', '/api/openapi.json', { token: t.viewerToken })).body
    })
    after(() => t.close())

    test('is a valid OpenAPI 3.1.0 document by an independent validator', async () => {
      assert.equal(document.openapi, '3.1.0')
      const result = await new Validator().validate(document)
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000))
    })

    test('needs a bearer, and any access token or API key may read it', async () => {
      assert.equal((await t.request('GET', '/api/openapi.json')).status, 401)
      const p = await createProject(t)
      assert.equal((await t.request('GET', '/api/openapi.json', { token: p.key })).status, 200)
    })

    test('documents every spec path, the ingest headers, and the security schemes', () => {
      const paths = Object.keys(document.paths)
      for (const path of ['/api/ingest', '/api/health', '/api/projects', '/api/projects/{id}', '/api/projects/{id}/keys', '/api/projects/{id}/keys/{kid}', '/api/openapi.json']) {
        assert.ok(paths.includes(path), path)
      }
      for (const module of modules) {
        assert.ok(paths.includes(`${module.basePath}/status`), module.basePath)
        assert.ok(paths.includes(`${module.basePath}/events`), module.basePath)
      }
      const ingestOp = document.paths['/api/ingest'].post
      const headers = ingestOp.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name)
      assert.ok(headers.includes('x-service-signature'))
      assert.ok(headers.includes('x-service-idempotency-key'))
      assert.deepEqual(Object.keys(ingestOp.responses).sort(), ['200', '400', '401', '403', '409', '413', '415', '429', '431', '503'])
      assert.deepEqual(ingestOp.security, [{ apiKey: [] }])
      assert.deepEqual(document.paths['/api/health'].get.security, [])
      assert.ok(document.components.securitySchemes.accessToken && document.components.securitySchemes.apiKey)
    })

    test('real responses match the schemas the document gives for them', async () => {
      const mismatch = documentConformance(document)
      const p = await createProject(t)
      const seen: [string, string, TestResponse][] = []
      const call = async (method: string, url: string, options: Parameters<TestPortal['request']>[2] = {}) => {
        const response = await t.request(method, url, options)
        seen.push([method, url, response])
        return response
      }
      const ingestSeen = async (events: unknown[] | string, project = p, headers: Record<string, string> = {}) => seen.push(['POST', '/api/ingest', await ingest(t, project, events, headers)])
      await ingestSeen([event('log', { message: 'm', level: 'info' }), event('cost', { amount: 1, currency: 'EUR' }), event('error', { name: 'E', message: 'boom' })])
      await ingestSeen([event('log', { message: 'x' }), event('audit', {}), { type: 'nope' }, 5])
      await ingestSeen('{')
      await ingestSeen([], { ...p, key: 'pk_nope' })
      await ingestSeen([], p, { 'x-service-idempotency-key': 'not-a-uuid' })
      await call('GET', '/api/health')
      await call('GET', '/api/me', { token: t.viewerToken })
      await call('GET', '/api/projects', { token: t.adminToken })
      await call('GET', '/api/projects?cursor=zzz', { token: t.adminToken })
      await call('POST', '/api/projects', { token: t.adminToken, body: { name: 'doc' } })
      await call('POST', '/api/projects', { token: t.adminToken, body: {} })
      await call('POST', '/api/projects', { token: t.viewerToken, body: { name: 'no' } })
      await call('POST', '/api/projects', { token: t.adminToken, body: '{"name":"x"}', headers: { 'content-type': 'text/plain' } })
      await call('GET', `/api/projects/${p.id}`, { token: t.adminToken })
      await call('GET', '/api/projects/prj_missing', { token: t.adminToken })
      await call('GET', `/api/projects/${p.id}/keys`, { token: t.adminToken })
      await call('POST', `/api/projects/${p.id}/keys`, { token: t.adminToken, body: {} })
      const captured = await call('POST', '/api/errors/capture', { token: p.key, body: { name: 'TypeError', message: 'x is undefined' } })
      await call('POST', '/api/errors/capture', { token: p.key, body: { name: 'E', message: 'm' }, headers: { 'x-service-idempotency-key': 'not-a-uuid' } })
      await call('GET', `/api/errors/groups?project_id=${p.id}`, { token: t.viewerToken })
      await call('GET', `/api/errors/groups/${captured.body.groupFingerprint}`, { token: t.viewerToken })
      await call('GET', `/api/errors/groups/${'0'.repeat(64)}`, { token: t.viewerToken })
      await call('PATCH', `/api/errors/groups/${captured.body.groupFingerprint}`, { token: t.adminToken, body: { status: 'resolved' } })
      await call('PATCH', `/api/errors/groups/${captured.body.groupFingerprint}`, { token: t.viewerToken, body: { status: 'resolved' } })
      for (const module of modules) {
        await call('GET', `${module.basePath}/events?project_id=${p.id}`, { token: t.viewerToken })
        await call('GET', `${module.basePath}/status?project_id=${p.id}`, { token: t.viewerToken })
      }
      await call('GET', `/api/modules/logs/events?project_id=${p.id}`, { token: p.key })
      await call('GET', `/api/modules/logs/events?project_id=${p.id}&nope=1`, { token: t.viewerToken })
      await call('GET', '/api/modules/logs/events?project_id=prj_missing', { token: t.viewerToken })
      await call('GET', `/api/modules/logs/levels?project_id=${p.id}`, { token: t.viewerToken })
      const endpoint = await call('POST', '/api/webhooks/endpoints', { token: t.adminToken, body: { projectId: p.id, url: 'https://hooks.example.com/x' } })
      await call('GET', `/api/webhooks/endpoints/${endpoint.body.id}`, { token: t.viewerToken })
      await call('POST', `/api/webhooks/endpoints/${endpoint.body.id}/rotate`, { token: t.adminToken })
      const delivered = await call('POST', '/api/webhooks/deliver', { token: t.adminToken, body: { projectId: p.id, eventType: 'invoice.paid', payload: { a: 1 } } })
      await call('GET', `/api/webhooks/deliveries/${delivered.body.deliveries[0].id}`, { token: t.viewerToken })
      await call('POST', `/api/webhooks/deliveries/${delivered.body.deliveries[0].id}/retry`, { token: t.adminToken })
      await call('PATCH', `/api/webhooks/endpoints/${endpoint.body.id}`, { token: t.adminToken, body: { enabled: false } })
      await call('POST', `/api/webhooks/deliveries/${delivered.body.deliveries[0].id}/retry`, { token: t.adminToken })
      await call('GET', `/api/webhooks/deliveries?project_id=${p.id}`, { token: t.viewerToken })
      await call('GET', '/api/openapi.json')

      const statuses = new Set(seen.map(([, , response]) => response.status))
      for (const status of [200, 201, 202, 400, 401, 403, 404, 409, 415]) assert.ok(statuses.has(status), `the run saw a ${status}`)
      const problems = seen.map(([method, url, response]) => mismatch(method, url, response)).filter(Boolean)
      assert.deepEqual(problems, [])
    })

    test('every operation keeps the conventions: operationId, declared tag, summary, own description, described parameters, examples', () => {
      const declaredTags = new Set(document.tags.map((tag: any) => tag.name))
      for (const tag of document.tags) assert.ok(tag.description, `tag ${tag.name} has a description`)
      const operationIds = new Set<string>()
      for (const [path, operations] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          const where = `${method.toUpperCase()} ${path}`
          assert.match(operation.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${where}: a camelCase operationId`)
          assert.ok(!operationIds.has(operation.operationId), `${where}: operationId ${operation.operationId} is unique`)
          operationIds.add(operation.operationId)
          assert.ok(operation.tags?.length > 0 && operation.tags.every((tag: string) => declaredTags.has(tag)), `${where}: tags ${operation.tags} are declared`)
          assert.ok(operation.summary, `${where}: a summary`)
          const ownDescription = (operation.description ?? '').split('\n\n').filter((part: string) => !part.includes('x-required-role')).join('')
          assert.ok(ownDescription.trim(), `${where}: a description of its own, beyond the role note`)
          for (const parameter of operation.parameters ?? []) assert.ok(parameter.description, `${where}: parameter ${parameter.name} is described`)
          if (operation.requestBody) {
            for (const media of Object.values<any>(operation.requestBody.content)) assert.ok(media.example !== undefined || media.examples, `${where}: a request body example`)
          }
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            if (response.$ref) continue
            assert.ok(response.description && response.description !== 'Default Response', `${where} ${status}: described`)
            if (!status.startsWith('2') || !response.content) continue
            for (const media of Object.values<any>(response.content)) assert.ok(media.example !== undefined || media.examples, `${where} ${status}: an example`)
          }
        }
      }
    })

    test('every request body and success response example is an instance of its schema; OTLP and Sentry bodies carry real ones', async () => {
      const { against } = documentConformance(document)
      const wrong: string[] = []
      let checked = 0
      const examplesOf = (media: any) => [...(media.example !== undefined ? [media.example] : []), ...Object.values<any>(media.examples ?? {}).map((example) => example.value ?? example)]
      for (const [path, operations] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          const where = `${method.toUpperCase()} ${path}`
          const media = [
            ...Object.entries<any>(operation.requestBody?.content ?? {}).map(([type, entry]) => [`${where} request ${type}`, entry] as const),
            ...Object.entries<any>(operation.responses)
              .filter(([status, response]) => status.startsWith('2') && !response.$ref)
              .flatMap(([status, response]) => Object.entries<any>(response.content ?? {}).map(([type, entry]) => [`${where} ${status} ${type}`, entry] as const)),
          ]
          for (const [what, entry] of media) {
            const examples = examplesOf(entry)
            if (examples.length === 0) wrong.push(`${what}: no example`)
            for (const example of examples) {
              checked++
              const problem = against(entry.schema ?? {}, example)
              if (problem) wrong.push(`${what}: ${problem}`)
            }
          }
        }
      }
      assert.deepEqual(wrong, [])
      assert.ok(checked > 100, `${checked} examples checked`)

      // Not the generic string an example falls back to: what the real clients send, and the portal takes.
      const p = await createProject(t, 'examples', t.adminToken, ['ingest', 'otlp', 'sentry'])
      for (const signal of ['traces', 'logs', 'metrics']) {
        const body = examplesOf(document.paths[`/api/otlp/v1/${signal}`].post.requestBody.content['application/json'])[0]
        assert.match(body, new RegExp(`"resource${signal === 'traces' ? 'Spans' : signal === 'logs' ? 'Logs' : 'Metrics'}"`))
        const answer = await t.request('POST', `/api/otlp/v1/${signal}`, { token: p.key, body, headers: { 'content-type': 'application/json' } })
        assert.equal(answer.status, 200, `${signal}: ${answer.text}`)
        assert.equal(answer.body.partialSuccess, undefined, `${signal}: every item of the example is stored`)
      }
      const sentryPath = Object.keys(document.paths).find((path) => path.endsWith('/envelope/'))!
      const envelope = examplesOf(document.paths[sentryPath].post.requestBody.content['application/x-sentry-envelope'])[0]
      assert.match(envelope.split('\n')[1], /"type":"event"/)
    })

    test('names the shared shapes as components, marks admin operations, and lists each response’s problem codes', () => {
      for (const name of ['Problem', 'Project', 'ApiKey', 'CreatedApiKey', 'ErrorGroup', 'ErrorGroupDetail', 'Delivery', 'Attempt', 'Endpoint', 'IngestRequest', 'IngestResponse', 'ProjectList', 'ErrorGroupList']) {
        assert.ok(document.components.schemas[name], `component ${name}`)
      }
      for (const module of modules) {
        const pascal = module.type.replace(/(^|_)([a-z])/g, (_m: string, _s: string, letter: string) => letter.toUpperCase())
        for (const name of [`${pascal}Payload`, `${pascal}Event`, `${pascal}EventList`]) assert.ok(document.components.schemas[name], `component ${name}`)
      }
      assert.ok(!JSON.stringify(document).includes('x-component-name'), 'the naming keyword stays out of the document')
      const createProject = document.paths['/api/projects'].post
      assert.equal(createProject['x-required-role'], 'admin')
      assert.match(createProject.description, /admin/)
      assert.equal(document.paths['/api/projects'].get['x-required-role'], 'viewer')
      const notFound = document.components.responses[document.paths['/api/projects/{id}'].get.responses['404'].$ref.split('/').pop()]
      assert.deepEqual(notFound.content['application/problem+json'].schema.allOf[1].properties.code.enum, ['not_found'])
      const unauthorized = document.components.responses[document.paths['/api/projects'].get.responses['401'].$ref.split('/').pop()]
      assert.ok(unauthorized.headers['WWW-Authenticate'])
      const ingestOp = document.paths['/api/ingest'].post
      assert.ok(ingestOp.responses['200'].headers['Idempotent-Replayed'] && ingestOp.responses['200'].headers['RateLimit-Limit'])
      const tooMany = document.components.responses[ingestOp.responses['429'].$ref.split('/').pop()]
      assert.ok(tooMany.headers['Retry-After'])
      const captureKey = document.paths['/api/errors/capture'].post.parameters.find((parameter: any) => parameter.name === 'x-service-idempotency-key')
      assert.equal(captureKey.schema.format, 'uuid')
      assert.notEqual(document.components.securitySchemes.accessToken.bearerFormat, document.components.securitySchemes.apiKey.bearerFormat)
      assert.ok(document.webhooks['error.group.created'].post.requestBody)
      assert.ok(!JSON.stringify(document).includes('idempotency_key_reused'))
    })

    test('a JSON route answers 415 to any other media type, text/plain included', async () => {
      for (const contentType of ['text/plain', 'text/plain; charset=utf-8', 'application/xml', 'application/x-www-form-urlencoded']) {
        const response = await t.request('POST', '/api/projects', { token: t.adminToken, body: '{"name":"x"}', headers: { 'content-type': contentType } })
        assert.equal(response.status, 415, contentType)
        assert.equal(response.body.code, 'unsupported_media_type')
      }
    })
  })
}
