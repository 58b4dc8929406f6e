import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver } from 'kysely'
import { likePattern, writeHealthProbe, type Storage } from '../storage.ts'
import type { Database } from '../tables.ts'

const UNAVAILABLE_CODES = new Set(['SQLITE_READONLY', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_BUSY', 'SQLITE_CORRUPT'])

const STATEMENT_CACHE_SIZE = 500

export function openSqliteStorage(file: string, synchronous: 'full' | 'normal'): Storage {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  const database = new SQLite(file)
  database.pragma('journal_mode = WAL')
  // full: each commit is fsynced before the portal answers, so an acknowledged event survives power loss;
  // normal: it survives a crash of the portal, and the last commits may be lost if the machine loses power.
  database.pragma(`synchronous = ${synchronous}`)
  database.pragma('busy_timeout = 5000')
  database.pragma('foreign_keys = ON')
  database.pragma('cache_size = -65536')
  // temp_store stays on disk: in memory it would spare the statement journals that multi-row upserts
  // spill, but SQLite's sorts would then grow without bound (see README, Errors module).
  const db = new Kysely<Database>({ dialect: new PortalSqliteDialect(database) })

  return {
    dialect: 'sqlite',
    db,
    types: { json: 'text', bigint: 'integer', double: 'real' },
    parseJson: <T>(value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as T,
    jsonText: (column, key) => sql<string | null>`json_extract(${sql.ref(column)}, ${'$."' + key.replace(/"/g, '') + '"'})`,
    // Numbers and booleans as PostgreSQL's `#>>` prints them, so a filter matches the same rows on both.
    jsonPathText(column, keys) {
      const path = '$' + keys.map((key) => '."' + key.replace(/"/g, '') + '"').join('')
      const value = sql`${sql.ref(column)}, ${path}`
      return sql<string | null>`(case json_type(${value}) when 'true' then 'true' when 'false' then 'false' else cast(json_extract(${value}) as text) end)`
    },
    containsText: (column, needle) => sql<boolean>`${sql.ref(column)} like ${likePattern(needle)} escape '\\'`,
    // SQLite has one writer at a time: a write transaction already excludes every other claimer.
    forUpdateSkipLocked: (query) => query,
    // One SQLite file has one writer process; the in-process lock is all there is to hold.
    withExclusiveLock: (_name, run) => run(),
    // A write transaction holds the process's one connection, so nothing else writes until it ends.
    lockInTransaction: async () => {},
    // Extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED) share their primary code's first two words.
    isUnavailable: (error) => UNAVAILABLE_CODES.has(String((error as { code?: unknown })?.code ?? '').split('_').slice(0, 2).join('_')),
    ping: () => writeHealthProbe(db),
    async close() {
      await db.destroy()
    },
  }
}

/** Kysely's SQLite dialect over the portal's driver. */
class PortalSqliteDialect extends SqliteDialect {
  constructor(private readonly database: SQLite.Database) {
    super({ database })
  }

  override createDriver(): Driver {
    return new PortalSqliteDriver(this.database)
  }
}

/** Kysely's SQLite driver, with a statement cache and a rollback that knows when SQLite has rolled back already. */
class PortalSqliteDriver extends SqliteDriver {
  constructor(private readonly database: SQLite.Database) {
    super({ database: withStatementCache(database) })
  }

  // SQLite rolls a transaction back by itself when its COMMIT fails on a full disk or an I/O error;
  // Kysely's ROLLBACK would then fail with "no transaction is active" and hide the error that says why.
  override async rollbackTransaction(connection: DatabaseConnection) {
    if (this.database.inTransaction) await super.rollbackTransaction(connection)
  }
}

// Kysely prepares every query anew; most of the portal's statements repeat, and preparing is not free.
function withStatementCache(database: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>()
  return {
    close: () => database.close(),
    prepare(sql: string) {
      let statement = statements.get(sql)
      if (!statement) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!)
        statement = database.prepare(sql)
        statements.set(sql, statement)
      }
      return statement
    },
  }
}
