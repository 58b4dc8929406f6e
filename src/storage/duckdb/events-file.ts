import path from 'node:path'
import { sql } from 'kysely'
import type { Storage } from '../storage.ts'

/** Where the DuckDB event store keeps the columnar modules' event rows: events.duckdb beside the SQLite database file. */
export function eventsFileBeside(sqliteFile: string): string {
  return path.join(path.dirname(path.resolve(sqliteFile)), 'events.duckdb')
}

/** Which of `tables` hold rows in the SQLite database of `storage` (before migrations a table may not exist: none). */
export async function tablesWithRows(storage: Storage, tables: readonly string[]): Promise<string[]> {
  const holding: string[] = []
  for (const table of tables) {
    const { rows: exists } = await sql`select 1 from sqlite_master where type = 'table' and name = ${table}`.execute(storage.db)
    if (exists.length && (await sql`select 1 from ${sql.table(table)} limit 1`.execute(storage.db)).rows.length) holding.push(table)
  }
  return holding
}
