import { parseArgs } from 'node:util'
import v8 from 'node:v8'
import { ConfigError, loadConfig } from '../config.ts'
import { modules } from '../modules/registry.ts'
import { createAccessToken, createOrganization, DEFAULT_ORG_ID } from '../identity/store.ts'
import { allMigrations, createLogger, openMigratedStorage, startPortalThroughOutage, type RunningPortal } from '../portal.ts'
import { migrate } from '../storage/migrations.ts'
import { openStorage } from '../storage/open-storage.ts'
import { backupEmbedded, BackupError, EventsFileHeldError } from '../backup/backup.ts'
import { backupThroughRunningPortal } from '../backup/online-backup.ts'
import { StartupError } from '../startup.ts'

const USAGE = `usage: portal <command>

  serve                                   start the portal (the default)
  help                                    this text
  migrate                                 apply database migrations and exit
  token create --role admin|viewer [--name NAME] [--org ORG_ID]
                                          create an access token and print it once
  org create --name NAME                  create an organisation and print its id
  backup DEST_DIR [--url URL]             a consistent copy of the SQLite database, events.duckdb and
                                          secret.key into DEST_DIR, the portal running or not: a running
                                          portal (at URL, else PORT/HOST) writes it through
                                          POST /api/backups; see docs/operations-guide.md

Configuration comes from the environment (see README).`

async function main(argv: string[]) {
  const [command = 'serve', sub, ...rest] = argv
  if (command === 'help' || command === '--help' || command === '-h') return void console.log(USAGE)
  const config = loadConfig(modules)
  if (command === 'serve') return serve(config)
  if (command === 'migrate') {
    const storage = await openStorage(config.databaseUrl, {
      poolSize: 1,
      queryTimeoutMs: config.databaseQueryTimeoutMs,
      sqliteSynchronous: config.sqliteSynchronous,
      startupWaitMs: config.startupWaitMs,
      onStartupWait: (message) => console.error(`portal: ${message}`),
    })
    const applied = await migrate(storage, allMigrations)
    await storage.close()
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'the database is up to date')
    return
  }
  if (command === 'token' && sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { role: { type: 'string' }, name: { type: 'string' }, org: { type: 'string' } } })
    if (values.role !== 'admin' && values.role !== 'viewer') throw new UsageError('--role must be admin or viewer')
    const storage = await openMigratedStorage(config, { stateOnly: true })
    try {
      const orgId = values.org ?? DEFAULT_ORG_ID
      const org = await storage.db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst()
      if (!org) throw new UsageError(`no organisation ${orgId}`)
      const { token } = await createAccessToken(storage.db, { orgId, role: values.role, name: values.name ?? `${values.role} token (CLI)` })
      console.log(token)
    } finally {
      await storage.close()
    }
    return
  }
  if (command === 'org' && sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { name: { type: 'string' } } })
    if (!values.name) throw new UsageError('--name is required')
    const storage = await openMigratedStorage(config, { stateOnly: true })
    try {
      console.log((await createOrganization(storage.db, values.name)).id)
    } finally {
      await storage.close()
    }
    return
  }
  if (command === 'backup') {
    if (!sub) throw new UsageError('backup needs a destination folder')
    const { values } = parseArgs({ args: rest, options: { url: { type: 'string' } } })
    let written: string[]
    try {
      written = await backupEmbedded(config, sub)
    } catch (error) {
      if (!(error instanceof EventsFileHeldError)) throw error
      const storage = await openMigratedStorage(config, { stateOnly: true })
      try {
        written = await backupThroughRunningPortal(config, storage, sub, values.url)
      } finally {
        await storage.close()
      }
    }
    console.log(`backed up ${written.join(', ')}`)
    return
  }
  throw new UsageError(`unknown command: ${argv.join(' ')}`)
}

async function serve(config: ReturnType<typeof loadConfig>) {
  // A heap may grow to 1.5 times what a full collection leaves, where V8's own factor reaches 4 under a high
  // allocation rate: at full ingest the heaps of the event loop's, writer and reader threads are mostly
  // garbage waiting for it. V8's flags are the process's: set before the threads start, they follow it.
  v8.setFlagsFromString('--heap-growing-percent=50')
  const log = createLogger(config)
  const stopping = new AbortController()
  let portal: RunningPortal | undefined
  const stop = async (signal: string) => {
    log.info({ signal }, 'shutting down')
    stopping.abort()
    // A portal still starting is closed by `serve` once it has started.
    if (!portal) return
    await portal.close()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
  portal = await startPortalThroughOutage(config, log, stopping.signal)
  if (!portal || stopping.signal.aborted) {
    await portal?.close()
    process.exit(0)
  }
  if (portal.firstAdminToken) {
    // Printed once, to the terminal and not through the logger: logs never carry credentials.
    process.stdout.write(
      `\nFirst start on an empty database: an admin access token was created.\n` +
        `It is shown this once; keep it somewhere safe:\n\n  ${portal.firstAdminToken}\n\n`,
    )
  }
  log.info({ url: portal.url, database: portal.ctx.storage.dialect }, 'portal listening')
}

class UsageError extends Error {}

main(process.argv.slice(2)).catch((error) => {
  if (error instanceof ConfigError || error instanceof StartupError || error instanceof UsageError || error instanceof BackupError) {
    console.error(`portal: ${error.message}`)
    if (error instanceof UsageError) console.error(`\n${USAGE}`)
    process.exit(2)
  }
  console.error(error)
  process.exit(1)
})
