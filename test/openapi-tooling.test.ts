import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import { tsImport } from 'tsx/esm/api'
import { hmacSha256Hex } from '../src/identity/secrets.ts'
import { DIALECTS, startTestPortal, type TestPortal } from './support/portal.ts'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '..')
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name)
const clientDir = path.join(root, 'test', 'client')

type Sign = typeof hmacSha256Hex
/**
 * A walk-through, loaded as TypeScript at run time: it imports the client that before() generates, so it
 * is checked by its own tsconfig under test/client, not by the project's typecheck of a clean clone.
 */
const importWalkThrough = (file: string) => tsImport(`./client/${file}`, import.meta.url)

/** The live document, as a file the command-line linters read. */
async function writeLiveDocument(t: TestPortal): Promise<{ file: string; document: any }> {
  const response = await t.request('GET', '/api/openapi.json', { token: t.viewerToken })
  assert.equal(response.status, 200)
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'portal-openapi-')), 'openapi.json')
  fs.writeFileSync(file, response.text)
  return { file, document: response.body }
}

// The document does not depend on the database, so the linters read it once; the generated client runs against each.
describe('the live OpenAPI document in the tools that consume it', () => {
  let t: TestPortal
  let file: string
  before(async () => {
    t = await startTestPortal(DIALECTS[0])
    file = (await writeLiveDocument(t)).file
  })
  after(async () => {
    await t.close()
    fs.rmSync(path.dirname(file), { recursive: true, force: true })
  })

  test('Redocly CLI, recommended ruleset: no error and no warning', async () => {
    const { stdout } = await run(bin('redocly'), ['lint', '--config', path.join(root, 'redocly.yaml'), '--format', 'json', file], { cwd: root, maxBuffer: 64 << 20 }).catch((error) => error)
    const report = JSON.parse(stdout)
    const problems = report.problems.map((problem: any) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location?.[0]?.pointer}`)
    assert.deepEqual(problems, [])
    assert.equal(report.totals.errors + report.totals.warnings, 0)
  })

  test('Spectral, spectral:oas ruleset: no error and no warning', async () => {
    const { stdout } = await run(bin('spectral'), ['lint', '--ruleset', path.join(root, '.spectral.yaml'), '--format', 'json', '--fail-severity', 'hint', file], { cwd: root, maxBuffer: 64 << 20 }).catch(
      (error) => error,
    )
    // Spectral prints a summary line after the JSON array.
    const results = JSON.parse(stdout.slice(stdout.indexOf('['), stdout.lastIndexOf(']') + 1))
    assert.deepEqual(
      results.map((result: any) => `${result.code}: ${result.message} at ${result.path.join('.')}`),
      [],
    )
  })
})

describe('a client generated from the live document (openapi-typescript + openapi-fetch)', () => {
  let t: TestPortal
  before(async () => {
    t = await startTestPortal(DIALECTS[0])
    const document = (await t.request('GET', '/api/openapi.json', { token: t.viewerToken })).body
    fs.mkdirSync(path.join(clientDir, 'generated'), { recursive: true })
    fs.writeFileSync(path.join(clientDir, 'generated', 'portal-api.ts'), astToString(await openapiTS(document)))
  })
  after(() => t.close())

  test('compiles with the walk-through under tsc --strict', async () => {
    const result = await run(bin('tsc'), ['-p', path.join(clientDir, 'tsconfig.json')], { cwd: root }).catch((error) => error)
    assert.equal(result.code ?? 0, 0, result.stdout)
  })

  for (const dialect of DIALECTS) {
    test(`runs the walk-through against a portal on ${dialect}`, async () => {
      const portal = dialect === DIALECTS[0] ? t : await startTestPortal(dialect)
      try {
        const { walkThrough } = (await importWalkThrough('walk-through.ts')) as { walkThrough(base: string, token: string, sign: Sign): Promise<Record<string, unknown>> }
        const result = await walkThrough(portal.url, portal.adminToken, hmacSha256Hex)
        assert.equal(result.accepted, 1)
        assert.equal(result.rejected, 1, 'the audit event without an actor is rejected, the batch still a 200')
        assert.deepEqual(result.logMessages, ['hello from a generated client'])
        assert.deepEqual(result.group, { name: 'TypeError', count: 1, status: 'unresolved' })
        assert.deepEqual(result.notFound, { status: 404, code: 'not_found' })
      } finally {
        if (portal !== t) await portal.close()
      }
    })
  }
})

describe('a client generated from the live document by a second generator (@hey-api/openapi-ts)', () => {
  let t: TestPortal
  let generated: { stdout: string; stderr: string; code?: number }
  before(async () => {
    t = await startTestPortal(DIALECTS[0])
    const { file } = await writeLiveDocument(t)
    const output = path.join(clientDir, 'generated-hey-api')
    fs.rmSync(output, { recursive: true, force: true })
    generated = await run(bin('openapi-ts'), ['--input', file, '--output', output, '--client', '@hey-api/client-fetch', '--no-log-file'], { cwd: root, env: { ...process.env, NO_COLOR: '1' } }).catch((error) => error)
    fs.rmSync(path.dirname(file), { recursive: true, force: true })
  })
  after(() => t.close())

  test('generates without a warning, one function per operationId and a type per named component', () => {
    assert.equal(generated.code ?? 0, 0, generated.stderr)
    assert.doesNotMatch(generated.stdout + generated.stderr, /warn|⚠️|error/i)
    const sdk = fs.readFileSync(path.join(clientDir, 'generated-hey-api', 'sdk.gen.ts'), 'utf8')
    const types = fs.readFileSync(path.join(clientDir, 'generated-hey-api', 'types.gen.ts'), 'utf8')
    for (const operation of ['ingestEvents', 'listErrorGroups', 'getErrorGroup', 'createProject', 'listTenantPlans']) assert.match(sdk, new RegExp(`export const ${operation} =`), operation)
    for (const name of ['Problem', 'Project', 'ApiKey', 'ErrorGroup', 'Delivery', 'Attempt', 'LatestDeploy', 'TenantPlan', 'FlagState', 'Trace', 'VideoJob', 'CostTotals']) {
      assert.match(types, new RegExp(`export type ${name} = `), name)
    }
  })

  test('compiles with its walk-through under tsc --strict', async () => {
    const result = await run(bin('tsc'), ['-p', path.join(clientDir, 'tsconfig.hey-api.json')], { cwd: root }).catch((error) => error)
    assert.equal(result.code ?? 0, 0, result.stdout)
  })

  test('runs its walk-through against a real portal', async () => {
    const { heyApiWalkThrough } = (await importWalkThrough('hey-api-walk-through.ts')) as { heyApiWalkThrough(base: string, token: string, sign: Sign): Promise<Record<string, unknown>> }
    const result = await heyApiWalkThrough(t.url, t.adminToken, hmacSha256Hex)
    assert.deepEqual(result, {
      accepted: 2,
      logMessages: ['hello from hey-api'],
      plans: [{ plan: 'pro', ingestLimitPerSecond: 50 }],
      notFound: { status: 404, code: 'not_found' },
    })
  })
})
