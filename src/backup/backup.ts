import fs from 'node:fs'
import path from 'node:path'
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import type { Config } from '../config.ts'
import { eventsFileBeside } from '../storage/duckdb/events-file.ts'
import { copySqliteDatabase } from '../storage/sqlite/sqlite-backup.ts'

const KEY_FILE = 'secret.key'

/**
 * Copies the embedded default into `destination`: the SQLite database through SQLite's online backup
 * API (pages copied in steps while the portal keeps writing; the copy is one consistent snapshot), the
 * DuckDB event store when there is one, and the key file that webhook secrets are encrypted under,
 * without which the copy's secrets are unreadable. With PORTAL_SECRET_KEY set there is no key file: that
 * value must be kept apart. Returns the files written; on failure it leaves none of them behind.
 *
 * events.duckdb can only be copied by this process with the portal stopped: DuckDB lets one process open a
 * file read-write and no other process open it at all meanwhile. So it is opened (read-only) first, and a
 * running portal's lock throws EventsFileHeldError before anything is written: `portal backup` then asks
 * the running portal to write the backup itself (online-backup.ts). Held for the whole backup,
 * that read-only lock also keeps a portal from starting and moving outbox rows into DuckDB between the two
 * copies; the outbox rows not yet applied travel in the SQLite copy and are applied at the restored start.
 */
export async function backupEmbedded(config: Config, destination: string): Promise<string[]> {
  if (!config.databaseUrl.startsWith('sqlite:')) {
    throw new BackupError('portal backup copies the embedded SQLite database; back PostgreSQL up with pg_dump (docs/operations-guide.md)')
  }
  const source = config.databaseUrl.slice('sqlite:'.length)
  if (!fs.existsSync(source)) throw new BackupError(`no database at ${source}`)
  const target = path.join(destination, path.basename(source))
  const eventsSource = eventsFileBeside(source)
  const eventsTarget = path.join(destination, path.basename(eventsSource))
  for (const file of [target, eventsTarget]) {
    if (fs.existsSync(file)) throw new BackupError(`${file} exists; back up into an empty folder`)
  }
  // Whether EVENT_STORE says duckdb or not: the file is where the events are, if it is there.
  const events = fs.existsSync(eventsSource) ? await openEventsReadOnly(eventsSource) : undefined
  const written: string[] = []
  try {
    written.push(target)
    await copySqliteDatabase(source, destination)
    if (events) {
      written.push(eventsTarget)
      await copyEvents(events, eventsTarget)
    } else if (fs.existsSync(eventsSource)) {
      // A portal on EVENT_STORE=duckdb started during the SQLite copy: it may have moved outbox rows into DuckDB.
      throw new BackupError(`${eventsSource} appeared during the backup (a portal started?); stop the portal and run portal backup again`)
    }
    written.push(...copyKeyFile(config, destination))
    return written
  } catch (error) {
    for (const file of written) for (const suffix of ['', '-journal', '.wal']) fs.rmSync(file + suffix, { force: true })
    throw error
  } finally {
    events?.connection.closeSync()
    events?.instance.closeSync()
  }
}

/**
 * Copies the key file that webhook secrets are encrypted under into `destination` (mode 0600), without
 * which a copy's secrets are unreadable; with PORTAL_SECRET_KEY set there is none, and that value must be
 * kept apart. Returns the file written, if any.
 */
export function copyKeyFile(config: Pick<Config, 'dataDir' | 'secretKey'>, destination: string): string[] {
  const keyFile = path.join(config.dataDir, KEY_FILE)
  if (config.secretKey !== undefined || !fs.existsSync(keyFile)) return []
  const keyTarget = path.join(destination, KEY_FILE)
  fs.copyFileSync(keyFile, keyTarget)
  fs.chmodSync(keyTarget, 0o600)
  return [keyTarget]
}

/**
 * An in-memory DuckDB with events.duckdb attached read-only as `source`. Read-only, DuckDB replays the
 * file's WAL (left by a portal killed before its checkpoint) in memory and leaves the file as it is.
 */
async function openEventsReadOnly(file: string): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  // Loaded here, not at the top: every CLI start would otherwise load DuckDB's 68 MB binary.
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const connection = await instance.connect()
  try {
    await connection.run(`attach ${literal(file)} as source (read_only)`)
  } catch (error) {
    connection.closeSync()
    instance.closeSync()
    const message = error instanceof Error ? error.message : String(error)
    if (/lock/i.test(message)) throw new EventsFileHeldError(`${file} is open in another process, most likely the running portal (DuckDB: ${message})`)
    throw new BackupError(`cannot open ${file}: ${message}`)
  }
  return { instance, connection }
}

/** Copies every table of `source` into a new DuckDB file (one transaction), then checks each table's row count. */
async function copyEvents({ connection }: { connection: DuckDBConnection }, target: string) {
  await connection.run(`attach ${literal(target)} as target`)
  try {
    await connection.run('copy from database source to target')
    const tables = (await connection.runAndReadAll(`select schema_name, table_name from duckdb_tables() where database_name = 'source'`)).getRows()
    for (const [schema, table] of tables) {
      const name = `${quote(String(schema))}.${quote(String(table))}`
      const counts = (await connection.runAndReadAll(`select (select count(*) from source.${name}), (select count(*) from target.${name})`)).getRows()[0]
      if (counts[0] !== counts[1]) throw new Error(`the copy of events.duckdb holds ${counts[1]} rows of ${name}, the original ${counts[0]}`)
    }
  } finally {
    // Detaching checkpoints the copy: one file, no WAL beside it.
    await connection.run('detach target')
  }
}

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`

export class BackupError extends Error {}

/** events.duckdb is held by another process (a running portal): this process cannot read it. Nothing was written. */
export class EventsFileHeldError extends BackupError {}
