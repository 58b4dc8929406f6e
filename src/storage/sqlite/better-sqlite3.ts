import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

const requireDriver = createRequire(import.meta.url)

/**
 * The better-sqlite3 build this Node.js can run, as a file a worker thread can `require` too. 13 is built for
 * Node-API 10 (Node 22.14 and later) and crashes on Node 20; 12 (package `better-sqlite3-node20`, compiled at
 * install) aborts on Node 24.19 and later when a statement is collected (WiseLibs/better-sqlite3#1515).
 */
export const betterSqlite3Path: string = requireDriver.resolve(Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20')

const SQLite = requireDriver(betterSqlite3Path) as typeof BetterSqlite3
// The driver's types, as `import SQLite from 'better-sqlite3'` gives them: SQLite.Database, SQLite.Statement, …
declare namespace SQLite {
  export type Database = BetterSqlite3.Database
  export type Statement<P extends unknown[] | {} = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>
}
export default SQLite
