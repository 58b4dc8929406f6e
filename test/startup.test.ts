import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createTestDatabase, DIALECTS, POSTGRES_ADMIN_URL } from './support/portal.ts'
import { freePort, killPortal, spawnPortal } from './support/process.ts'

const PORTAL_BIN = path.resolve(import.meta.dirname, '../bin/portal.js')

/** `portal serve` run to its end, as an operator starts it: its exit code and its standard error's lines. */
async function serveUntilExit(env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; errorLines: string[] }> {
  const child = spawn(process.execPath, [PORTAL_BIN, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', STARTUP_WAIT_SECONDS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  child.stdout.resume()
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(timer)
  return { code, errorLines: stderr.split('\n').filter(Boolean) }
}

/** One line on standard error, naming `variable` and what to do, and exit code 2. */
function assertExplained(result: { code: number | null; errorLines: string[] }, variable: string, remedy: RegExp) {
  assert.equal(result.code, 2, result.errorLines.join('\n'))
  assert.equal(result.errorLines.length, 1, `one line, not a stack trace: ${result.errorLines.join('\n')}`)
  assert.match(result.errorLines[0], new RegExp(`^portal: ${variable}: `))
  assert.match(result.errorLines[0], remedy)
}

const tempFolder = () => fs.mkdtempSync(path.join(os.tmpdir(), 'portal-startup-'))

describe('a start that cannot go on says why in one line and exits 2', () => {
  // A PostgreSQL server is at hand even when TEST_DATABASES leaves its tests out: these need no database of their own.
  test('a PostgreSQL database that does not exist: DATABASE_URL, and the createdb command', async () => {
    const url = new URL(POSTGRES_ADMIN_URL)
    url.pathname = `/portal_missing_${process.pid}`
    const result = await serveUntilExit({ DATABASE_URL: url.toString(), PORTAL_DATA_DIR: tempFolder() })
    assertExplained(result, 'DATABASE_URL', new RegExp(`has no database "portal_missing_${process.pid}"; create it first \\(createdb `))
  })

  test('an unreachable PostgreSQL, after the wait STARTUP_WAIT_SECONDS sets, each retry logged', async () => {
    const result = await serveUntilExit({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/portal`, PORTAL_DATA_DIR: tempFolder(), LOG_LEVEL: 'silent' })
    assertExplained(result, 'DATABASE_URL', /cannot be reached \(ECONNREFUSED\) after 1 s; start it or fix the host and port/)
  })

  test('an unreachable Redis: REDIS_URL, and how to do without it', async () => {
    const result = await serveUntilExit({ REDIS_URL: `redis://127.0.0.1:${await freePort()}`, PORTAL_DATA_DIR: tempFolder(), LOG_LEVEL: 'silent' })
    assertExplained(result, 'REDIS_URL', /cannot be reached \(ECONNREFUSED\) after 1 s; start it, fix REDIS_URL, or unset it/)
  })

  test('a data folder that cannot be written: PORTAL_DATA_DIR and its path', async () => {
    const file = path.join(tempFolder(), 'a-file')
    fs.writeFileSync(file, '')
    const result = await serveUntilExit({ PORTAL_DATA_DIR: path.join(file, 'data') })
    assertExplained(result, 'PORTAL_DATA_DIR', new RegExp(`${path.join(file, 'data')} cannot be written \\(ENOTDIR`))
  })

  test('a SQLite file in a folder that cannot be written: DATABASE_URL and the folder', async () => {
    const file = path.join(tempFolder(), 'a-file')
    fs.writeFileSync(file, '')
    const result = await serveUntilExit({ DATABASE_URL: `sqlite:${path.join(file, 'portal.db')}`, PORTAL_DATA_DIR: tempFolder(), PORTAL_SECRET_KEY: 'a secret key of this install' })
    assertExplained(result, 'DATABASE_URL', new RegExp(`${file} cannot be written \\(EEXIST: a file stands where the folder should be`))
  })

  test('a port in use: PORT, and the advice to pick another', async () => {
    const taken = net.createServer()
    const port = await freePort()
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve))
    try {
      const result = await serveUntilExit({ PORT: String(port), PORTAL_DATA_DIR: tempFolder() })
      assertExplained(result, 'PORT', new RegExp(`127\\.0\\.0\\.1:${port} is already in use by another process; stop it, or set PORT to a free port`))
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
})

describe('a PostgreSQL that comes up after the portal', { skip: !DIALECTS.includes('postgres') && 'TEST_DATABASES excludes postgres' }, () => {
  test('is waited for, each retry logged, and the portal then serves', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase('postgres')
    const target = new URL(database.url)
    const port = await freePort()
    const late = new URL(database.url)
    late.port = String(port)
    // Nothing listens at first; a proxy to the real server opens on that port once the portal has retried.
    const proxy = net.createServer((client) => {
      const server = net.connect(Number(target.port || 5432), target.hostname)
      client.pipe(server).pipe(client)
      client.on('error', () => server.destroy())
      server.on('error', () => client.destroy())
    })
    const logFile = path.join(database.dataDir, 'portal.log')
    const portalStarting = spawnPortal({ DATABASE_URL: late.toString(), PORTAL_DATA_DIR: database.dataDir, STARTUP_WAIT_SECONDS: '60' }, { logFile })
    // The server comes up only once the portal has found nothing there and said it tries again: a start slowed by a
    // busy machine must still meet the missing server first.
    const saidItWaits = () => fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('is not reachable yet')
    for (const deadline = Date.now() + 50_000; !saidItWaits() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100))
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve))
    const portal = await portalStarting
    try {
      assert.match(portal.output(), new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${port} is not reachable yet \\(ECONNREFUSED\\); trying again in [\\d.]+ s, for up to 60 s in all \\(STARTUP_WAIT_SECONDS\\)`))
      assert.equal((await fetch(`${portal.url}/api/health`)).status, 200)
    } finally {
      await killPortal(portal)
      proxy.close()
      await database.drop()
    }
  })
})
