import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import type { Storage } from '../storage.ts'

/** Where the DuckDB event store keeps the columnar modules' event rows: events.duckdb beside the SQLite database file. */
export function eventsFileBeside(sqliteFile: string): string {
  return path.join(path.dirname(path.resolve(sqliteFile)), 'events.duckdb')
}

/**
 * The event store of a SQLite data folder that EVENT_STORE does not name: DuckDB, unless the folder
 * predates it — its SQLite database holds rows of a columnar table and there is no events.duckdb. Those
 * rows stay where they are and are read there, rather than vanish from every read after an upgrade
 * (docs/event-store.md). The main thread and the ingest writer's thread come to the same answer, as
 * a portal on DuckDB creates events.duckdb when it opens and never writes those tables in SQLite.
 */
export async function eventStoreOfDataFolder(storage: Storage, sqliteFile: string, tables: readonly string[]): Promise<'sqlite' | 'duckdb'> {
  if (fs.existsSync(eventsFileBeside(sqliteFile))) return 'duckdb'
  for (const table of tables) {
    const { rows: exists } = await sql`select 1 from sqlite_master where type = 'table' and name = ${table}`.execute(storage.db)
    if (exists.length && (await sql`select 1 from ${sql.table(table)} limit 1`.execute(storage.db)).rows.length) return 'sqlite'
  }
  return 'duckdb'
}
