import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createProject, createTestDatabase, DIALECTS, event, ingest, readAll, requester, startTestPortalOn } from './support/portal.ts'
import { killPortal, runPortalCli, spawnPortal } from './support/process.ts'

const ADMIN = `pat_${'b'.repeat(32)}`

describe('portal backup', () => {
  test('a live SQLite portal backed up while ingesting: the restored copy holds every event acknowledged before the backup, beside the key file', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase('sqlite')
    const env = { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN }
    const portal = await spawnPortal(env, { timeoutMs: 90_000 })
    const destination = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-backup-'))
    try {
      const client = { request: requester(portal.url), adminToken: ADMIN }
      const project = await createProject(client)
      const acknowledged: string[] = []
      let writing = true
      let n = 0
      const writer = (async () => {
        while (writing) {
          const messages = Array.from({ length: 20 }, () => `m${n++}`)
          if ((await ingest(client, project, messages.map((message) => event('log', { message })))).status === 200) acknowledged.push(...messages)
        }
      })()
      await new Promise((resolve) => setTimeout(resolve, 500))
      const beforeBackup = acknowledged.length
      const printed = await runPortalCli(env, ['backup', destination])
      const afterBackup = acknowledged.length
      writing = false
      await writer
      assert.match(printed, /portal\.db.*secret\.key/)
      assert.ok(afterBackup > beforeBackup, 'ingest went on during the backup')
      assert.equal((fs.statSync(path.join(destination, 'secret.key')).mode & 0o777).toString(8), '600')
      assert.equal(fs.readFileSync(path.join(destination, 'secret.key'), 'utf8'), fs.readFileSync(path.join(database.dataDir, 'secret.key'), 'utf8'), 'the key webhook secrets are encrypted under')
      await killPortal(portal)

      const restored = await startTestPortalOn('sqlite', { url: `sqlite:${path.join(destination, 'portal.db')}`, dataDir: destination, drop: async () => {} })
      try {
        const messages = new Set((await readAll(restored, `/api/modules/logs/events?project_id=${project.id}`)).map((e: any) => e.data.message))
        const missing = acknowledged.slice(0, beforeBackup).filter((message) => !messages.has(message))
        assert.deepEqual(missing, [], 'every event acknowledged before the backup began is in it')
        console.log(`backup during ingest: ${beforeBackup} events acknowledged before it, ${afterBackup} when it ended, ${messages.size} in the copy`)
      } finally {
        await restored.close()
      }
    } finally {
      await killPortal(portal)
      fs.rmSync(destination, { recursive: true, force: true })
      await database.drop()
    }
  })

  if (DIALECTS.includes('postgres')) {
    test('on PostgreSQL it refuses, naming pg_dump', async () => {
      const database = await createTestDatabase('postgres')
      try {
        await assert.rejects(runPortalCli({ DATABASE_URL: database.url }, ['backup', path.join(os.tmpdir(), 'never')]), /pg_dump/)
      } finally {
        await database.drop()
      }
    })
  }
})
