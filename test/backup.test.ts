import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import SQLite from '../src/storage/sqlite/better-sqlite3.ts'
import { createOrganization, createAccessToken } from '../src/identity/store.ts'
import { createProject, createTestDatabase, DIALECTS, event, ingest, readAll, requester, startTestPortal, startTestPortalOn, type PortalClient, type TestProject } from './support/portal.ts'
import { killPortal, runPortalCli, spawnPortal } from './support/process.ts'

const ADMIN = `pat_${'b'.repeat(32)}`

describe('portal backup', () => {
  test('a live portal on SQLite rows backed up while ingesting: the restored copy holds every event acknowledged before the backup, beside the key file', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase('sqlite')
    // The CLI copies a running portal's data folder only where DuckDB holds nothing (the next test has DuckDB).
    const env = { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, EVENT_STORE: 'sqlite' }
    const portal = await spawnPortal(env, { timeoutMs: 90_000 })
    const destination = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-backup-'))
    try {
      const client = { request: requester(portal.url), adminToken: ADMIN }
      const project = await createProject(client)
      const logs = ingestLogsUntilStopped(client, project, 20)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const { acknowledged } = logs
      const beforeBackup = acknowledged.length
      const printed = await runPortalCli(env, ['backup', destination])
      const afterBackup = acknowledged.length
      await logs.stop()
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

  test('DuckDB, the default event store: while the portal runs under ingest (the portal writes it), after a stop, and after a SIGKILL, a copy restored into a fresh folder holds every log acknowledged before the backup, once', { timeout: 240_000 }, async () => {
    const database = await createTestDatabase('sqlite')
    const env = { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, EVENT_STORE: 'duckdb' }
    const backups = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-backup-'))
    let portal = await spawnPortal(env, { timeoutMs: 90_000 })
    try {
      let client = { request: requester(portal.url), adminToken: ADMIN }
      const project = await createProject(client)
      const acknowledged: string[] = []
      const ingestLogs = async (prefix: string, batches: number) => {
        for (let batch = 0; batch < batches; batch++) {
          const messages = Array.from({ length: 50 }, (_, i) => `${prefix}${batch}.${i}`)
          const response = await ingest(client, project, messages.map((message) => event('log', { message })))
          assert.equal(response.status, 200, response.text)
          acknowledged.push(...messages)
        }
      }
      await ingestLogs('a', 10)
      assert.equal((await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)).length, 500, 'a read applies the outbox to DuckDB')

      // While it runs, under ingest: the portal holds events.duckdb, so `portal backup` has it write the backup
      // (POST /api/backups) and moves the folder into place.
      const live = ingestLogsUntilStopped(client, project, 20)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const beforeBackup = live.acknowledged.slice()
      const online = path.join(backups, 'online')
      const printed = await runPortalCli({ ...env, HOST: '127.0.0.1', PORT: new URL(portal.url).port }, ['backup', online])
      const duringBackup = live.acknowledged.length
      await live.stop()
      assert.match(printed, /portal\.db.*events\.duckdb.*secret\.key/)
      assert.ok(duringBackup > beforeBackup.length, 'ingest went on during the backup')
      assert.deepEqual(fs.readdirSync(path.join(database.dataDir, 'backups')), [], 'the portal’s own copy was moved, not left behind')
      const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-restored-'))
      fs.cpSync(online, fresh, { recursive: true })
      const restoredOnline = await startTestPortalOn('sqlite', { url: `sqlite:${path.join(fresh, 'portal.db')}`, dataDir: fresh, drop: async () => fs.rmSync(fresh, { recursive: true, force: true }) }, { EVENT_STORE: 'duckdb' })
      try {
        const read = (await readAll(restoredOnline, `/api/modules/logs/events?project_id=${project.id}`)).map((e: any) => e.data.message)
        const messages = new Set(read)
        assert.deepEqual([...acknowledged, ...beforeBackup].filter((message) => !messages.has(message)), [], 'every log acknowledged before the backup began is in it')
        assert.equal(messages.size, read.length, 'none twice')
        console.log(`online portal backup with EVENT_STORE=duckdb: ${beforeBackup.length} live logs acknowledged before it, ${duringBackup} when it answered, ${read.length - acknowledged.length} in the copy`)
      } finally {
        await restoredOnline.close()
      }
      acknowledged.push(...live.acknowledged)

      // A graceful stop applies the whole outbox: the copy's events are all in its events.duckdb.
      await killPortal(portal, 'SIGTERM')
      const stopped = path.join(backups, 'stopped')
      assert.match(await runPortalCli(env, ['backup', stopped]), /portal\.db.*events\.duckdb.*secret\.key/)
      assert.equal(outboxRows(stopped), 0)
      await assertRestoredHolds(stopped, project, acknowledged)

      // A SIGKILL right after the last acknowledgement: events applied since the last checkpoint are in
      // events.duckdb.wal, which the backup replays; the outbox rows not applied yet travel in portal.db.
      portal = await spawnPortal(env, { timeoutMs: 90_000 })
      client = { request: requester(portal.url), adminToken: ADMIN }
      await ingestLogs('b', 5)
      assert.equal((await readAll(client, `/api/modules/logs/events?project_id=${project.id}`)).length, acknowledged.length)
      await ingestLogs('c', 5)
      await killPortal(portal, 'SIGKILL')
      assert.ok(fs.existsSync(path.join(database.dataDir, 'events.duckdb.wal')), 'the killed portal left DuckDB commits in its WAL')
      const killed = path.join(backups, 'killed')
      await runPortalCli(env, ['backup', killed])
      const unapplied = outboxRows(killed)
      await assertRestoredHolds(killed, project, acknowledged)
      console.log(`backup with EVENT_STORE=duckdb: ${acknowledged.length} logs acknowledged; after the SIGKILL ${unapplied} outbox rows were still unapplied in the copy`)
    } finally {
      await killPortal(portal)
      fs.rmSync(backups, { recursive: true, force: true })
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

describe('POST /api/backups: the running portal writes a backup into its data folder', () => {
  const stores = DIALECTS.includes('sqlite') ? [{ name: 'SQLite rows', env: { EVENT_STORE: 'sqlite' } }, { name: 'EVENT_STORE=duckdb', env: { EVENT_STORE: 'duckdb' } }] : []
  for (const store of stores) {
    test(`${store.name}: written while ingest goes on; a portal started on it reads every event acknowledged before it, once, and takes new ones`, { timeout: 120_000 }, async () => {
      const t = await startTestPortal('sqlite', store.env)
      try {
        const project = await createProject(t)
        const logs = ingestLogsUntilStopped(t, project, 50)
        await new Promise((resolve) => setTimeout(resolve, 300))
        const { acknowledged } = logs
        const beforeBackup = acknowledged.length
        const response = await t.request('POST', '/api/backups', { token: t.adminToken })
        const afterBackup = acknowledged.length
        await logs.stop()
        assert.equal(response.status, 201, response.text)
        const backup = response.body
        assert.equal(backup.folder, path.join(t.config.dataDir, 'backups', backup.id))
        const expected = store.env.EVENT_STORE === 'duckdb' ? ['portal.db', 'events.duckdb', 'secret.key'] : ['portal.db', 'secret.key']
        assert.deepEqual(backup.files.map((file: { name: string }) => file.name), expected)
        for (const file of backup.files) assert.equal(fs.statSync(path.join(backup.folder, file.name)).size, file.bytes)
        assert.equal((fs.statSync(path.join(backup.folder, 'secret.key')).mode & 0o777).toString(8), '600')
        assert.ok(acknowledged.length > beforeBackup, 'ingest went on')

        const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-restored-'))
        fs.cpSync(backup.folder, folder, { recursive: true })
        const restoredDatabase = { url: `sqlite:${path.join(folder, 'portal.db')}`, dataDir: folder, drop: async () => fs.rmSync(folder, { recursive: true, force: true }) }
        let restored = await startTestPortalOn('sqlite', restoredDatabase, store.env)
        try {
          const read = (await readAll(restored, `/api/modules/logs/events?project_id=${project.id}`)).map((e: any) => e.data.message)
          const messages = new Set(read)
          assert.deepEqual(acknowledged.slice(0, beforeBackup).filter((message) => !messages.has(message)), [], 'every event acknowledged before the backup began is in it')
          assert.equal(messages.size, read.length, 'none twice')
          // Events taken after the restore survive a restart: the copy's outbox sequence and what DuckDB counts as applied agree.
          const after = Array.from({ length: 50 }, (_, i) => `restored${i}`)
          assert.equal((await ingest(restored, project, after.map((message) => event('log', { message })))).status, 200)
          await restored.close()
          restored = await startTestPortalOn('sqlite', restoredDatabase, store.env)
          const reread = (await readAll(restored, `/api/modules/logs/events?project_id=${project.id}`)).map((e: any) => e.data.message)
          assert.equal(reread.length, read.length + after.length)
          console.log(`${store.name}: ${beforeBackup} events acknowledged before POST /api/backups, ${afterBackup} when it answered (${backup.durationMs} ms), ${read.length} in the copy`)
        } finally {
          await restored.close()
          await restoredDatabase.drop()
        }
      } finally {
        await t.close()
      }
    })
  }

  for (const dialect of DIALECTS) {
    test(`${dialect}: only an admin of the default organisation may; a viewer or another organisation's admin is refused`, async () => {
      const t = await startTestPortal(dialect)
      try {
        const viewer = await t.request('POST', '/api/backups', { token: t.viewerToken })
        assert.equal(viewer.status, 403)
        assert.equal(viewer.body.code, 'admin_required')
        const org = await createOrganization(t.portal.ctx.storage.db, 'tenant')
        const { token } = await createAccessToken(t.portal.ctx.storage.db, { orgId: org.id, role: 'admin', name: 'tenant admin' })
        const tenantAdmin = await t.request('POST', '/api/backups', { token })
        assert.equal(tenantAdmin.status, 403)
        assert.equal(tenantAdmin.body.code, 'install_admin_required')
        assert.equal(fs.existsSync(path.join(t.config.dataDir, 'backups')), false, 'a refused backup writes nothing')
        if (dialect === 'postgres') {
          const refused = await t.request('POST', '/api/backups', { token: t.adminToken })
          assert.equal(refused.status, 409)
          assert.equal(refused.body.code, 'backup_unsupported')
          assert.match(refused.body.detail, /pg_dump/)
        }
      } finally {
        await t.close()
      }
    })
  }
})

/** Batches of `batchSize` logs (`m0`, `m1`, …) sent one after another until `stop`; `acknowledged` grows with each 200. */
function ingestLogsUntilStopped(client: PortalClient, project: TestProject, batchSize: number) {
  const acknowledged: string[] = []
  let writing = true
  let n = 0
  const writer = (async () => {
    while (writing) {
      const messages = Array.from({ length: batchSize }, () => `m${n++}`)
      if ((await ingest(client, project, messages.map((message) => event('log', { message })))).status === 200) acknowledged.push(...messages)
    }
  })()
  return {
    acknowledged,
    async stop() {
      writing = false
      await writer
    },
  }
}

/** Outbox rows in a backup's portal.db: events acknowledged but not yet applied to DuckDB when it was taken. */
function outboxRows(folder: string): number {
  const db = new SQLite(path.join(folder, 'portal.db'), { fileMustExist: true })
  try {
    return (db.prepare('select count(*) as n from event_outbox').get() as { n: number }).n
  } finally {
    db.close()
  }
}

/** Restores a backup folder into a portal on EVENT_STORE=duckdb and checks it reads every message once. */
async function assertRestoredHolds(folder: string, project: TestProject, acknowledged: string[]) {
  const restored = await startTestPortalOn('sqlite', { url: `sqlite:${path.join(folder, 'portal.db')}`, dataDir: folder, drop: async () => {} }, { EVENT_STORE: 'duckdb' })
  try {
    const read = (await readAll(restored, `/api/modules/logs/events?project_id=${project.id}`)).map((e: any) => e.data.message)
    const messages = new Set(read)
    assert.deepEqual(acknowledged.filter((message) => !messages.has(message)), [], 'every acknowledged log is in the restored copy')
    assert.equal(read.length, acknowledged.length, 'and none twice')
  } finally {
    await restored.close()
  }
}
