import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import { startTestPortal, type TestPortal } from '../support/portal.ts'

/** The web UI's API types, generated from the live document so that they cannot drift from the server's schemas. */
const GENERATED = path.resolve(import.meta.dirname, '../../ui/src/api-types.generated.ts')
const HEADER = '// Generated from the portal’s OpenAPI document by test/ui/api-types.test.ts (WRITE_API_TYPES=1 rewrites it). Do not edit.\n'

let t: TestPortal
before(async () => {
  t = await startTestPortal('sqlite')
})
after(() => t.close())

test('ui/src/api-types.generated.ts is what the live document generates', async () => {
  const document = (await t.request('GET', '/api/openapi.json', { token: t.viewerToken })).body
  // The UI names the components it reads; the operations would only add weight.
  const generated = HEADER + astToString(await openapiTS({ ...document, paths: {}, webhooks: {} }))
  if (process.env.WRITE_API_TYPES === '1') fs.writeFileSync(GENERATED, generated)
  assert.equal(fs.readFileSync(GENERATED, 'utf8'), generated, 'stale: run WRITE_API_TYPES=1 node --import tsx --test test/ui/api-types.test.ts')
})
