import fs from 'node:fs'
import path from 'node:path'
import SQLite from './better-sqlite3.ts'

/**
 * Copies the SQLite database `source` into the folder `destination` through SQLite's online backup API:
 * pages copied in steps while the portal keeps writing, the copy one consistent snapshot. Returns the file written.
 */
export async function copySqliteDatabase(source: string, destination: string): Promise<string> {
  const target = path.join(destination, path.basename(source))
  if (fs.existsSync(target)) throw new Error(`${target} exists; back up into an empty folder`)
  fs.mkdirSync(destination, { recursive: true })
  const database = new SQLite(source, { fileMustExist: true })
  try {
    // The portal's writes wait on SQLite's busy timeout, never on the backup, which reads a page range per step.
    database.pragma('busy_timeout = 5000')
    await database.backup(target)
    return target
  } catch (error) {
    for (const suffix of ['', '-journal', '-wal']) fs.rmSync(target + suffix, { force: true })
    throw error
  } finally {
    database.close()
  }
}
