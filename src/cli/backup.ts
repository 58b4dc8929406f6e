import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import type { Config } from '../config.ts'

const KEY_FILE = 'secret.key'

/**
 * Copies the embedded default into `destination`: the SQLite database through SQLite's online backup
 * API (pages copied in steps while the portal keeps writing; the copy is one consistent snapshot), and
 * the key file that webhook secrets are encrypted under, without which the copy's secrets are unreadable.
 * With PORTAL_SECRET_KEY set there is no key file: that value must be kept apart. Returns the files written.
 */
export async function backupEmbedded(config: Config, destination: string): Promise<string[]> {
  if (!config.databaseUrl.startsWith('sqlite:')) {
    throw new BackupError('portal backup copies the embedded SQLite database; back PostgreSQL up with pg_dump (docs/operations-guide.md)')
  }
  const source = config.databaseUrl.slice('sqlite:'.length)
  if (!fs.existsSync(source)) throw new BackupError(`no database at ${source}`)
  fs.mkdirSync(destination, { recursive: true })
  const target = path.join(destination, path.basename(source))
  if (fs.existsSync(target)) throw new BackupError(`${target} exists; back up into an empty folder`)
  const database = new SQLite(source, { fileMustExist: true })
  try {
    // The portal's writes wait on SQLite's busy timeout, never on the backup, which reads a page range per step.
    database.pragma('busy_timeout = 5000')
    await database.backup(target)
  } finally {
    database.close()
  }
  const written = [target]
  const keyFile = path.join(config.dataDir, KEY_FILE)
  if (config.secretKey === undefined && fs.existsSync(keyFile)) {
    fs.copyFileSync(keyFile, path.join(destination, KEY_FILE))
    fs.chmodSync(path.join(destination, KEY_FILE), 0o600)
    written.push(path.join(destination, KEY_FILE))
  }
  return written
}

export class BackupError extends Error {}
