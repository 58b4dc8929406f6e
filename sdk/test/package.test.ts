import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import { createProject, DIALECTS, startTestPortal, type TestPortal } from '../../test/support/portal.ts'
import { GENERATED_FILE, REGENERATE_COMMAND, renderEventTypes } from '../scripts/generate-types.ts'
import { storedEvents } from './support/stored-events.ts'

const SDK_DIR = fileURLToPath(new URL('..', import.meta.url))
const PLAIN_JAVASCRIPT = fileURLToPath(new URL('./fixtures/plain-javascript.mjs', import.meta.url))

/**
 * The diagnostics of a TypeScript project, one line each; `options` override its tsconfig, `files` its file list.
 * The SDK's tests and scripts import the portal and take `npm run typecheck` 20 s; here only what ships is checked.
 */
function compile(tsconfig: string, options: ts.CompilerOptions = {}, files?: string[]): string[] {
  const configPath = path.join(SDK_DIR, tsconfig)
  const { config } = ts.readConfigFile(configPath, ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, SDK_DIR)
  const program = ts.createProgram(files ?? parsed.fileNames, { ...parsed.options, ...options })
  const emitted = program.emit()
  return [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((diagnostic) => {
    const where = diagnostic.file ? `${path.relative(SDK_DIR, diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!).line + 1}` : ''
    return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`
  })
}

describe('SDK package', () => {
  test('sdk/src/events.generated.ts matches the payload schemas of the registry', () => {
    assert.ok(fs.readFileSync(GENERATED_FILE, 'utf8') === renderEventTypes(), `sdk/src/events.generated.ts is stale: run \`${REGENERATE_COMMAND}\``)
  })

  test('the SDK typechecks, and payloads that break a schema are compile errors', () => {
    const sources = fs.readdirSync(path.join(SDK_DIR, 'src')).map((file) => path.join(SDK_DIR, 'src', file))
    assert.deepEqual(compile('tsconfig.json', {}, [...sources, path.join(SDK_DIR, 'test/fixtures/payload-types.ts')]), [])
  })

  describe(`built to ESM with declarations, used from plain JavaScript (portal on ${DIALECTS[0]})`, () => {
    let t: TestPortal
    let outDir: string
    before(async () => {
      t = await startTestPortal(DIALECTS[0])
      outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-sdk-build-'))
    })
    after(async () => {
      await t.close()
      fs.rmSync(outDir, { recursive: true, force: true })
    })

    test('the build emits JavaScript and declarations, and a plain .mjs program sends through it', async () => {
      assert.deepEqual(compile('tsconfig.build.json', { outDir }), [])
      for (const file of ['index.js', 'index.d.ts', 'client.d.ts', 'events.generated.d.ts']) assert.ok(fs.existsSync(path.join(outDir, file)), file)

      const project = await createProject(t)
      const stdout = await new Promise<string>((resolve, reject) => {
        const env = {
          ...process.env,
          SDK_ENTRY: pathToFileURL(path.join(outDir, 'index.js')).href,
          PORTAL_URL: t.url,
          PORTAL_API_KEY: project.key,
          PORTAL_WEBHOOK_SECRET: project.webhookSecret,
        }
        execFile(process.execPath, [PLAIN_JAVASCRIPT], { env, timeout: 30_000 }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)))
      })
      assert.equal(JSON.parse(stdout).accepted, 2)
      const [log] = await storedEvents(t.url, t.adminToken, project.id)
      assert.equal(log.data.message, 'from plain javascript')
    })
  })
})
