import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {
  CompiledQuery,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely'
import { percentilesAtRanks } from '../percentiles.ts'
import { columnsOf, DEFAULT_POOL_WAIT_MS, likePattern, PoolExhaustedError, writeHealthProbe, type Storage } from '../storage.ts'
import { tablesOf, type Database } from '../tables.ts'
import { sameDatabaseEvents } from '../event-store.ts'
import { walSync, type WalSync } from './wal-sync.ts'
import { sqliteLayoutMigrations } from './sqlite-migrations.ts'
import { sqliteSpace } from './sqlite-space.ts'
import { sqliteInvalidations } from './sqlite-invalidations.ts'
import { SqliteWorkerConnection } from './sqlite-worker-connection.ts'

// SQLite's own, and the file system's that the WAL's fsync can fail with.
const UNAVAILABLE_CODES = new Set(['SQLITE_READONLY', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_BUSY', 'SQLITE_CORRUPT', 'EIO', 'ENOSPC', 'EDQUOT', 'EROFS', 'EFBIG'])

/** `makeWalSync` is for the tests, which watch when the WAL is synced. */
export function openSqliteStorage(
  file: string,
  synchronous: 'full' | 'normal',
  makeWalSync: (walFile: string) => WalSync = walSync,
  connectionWaitMs = DEFAULT_POOL_WAIT_MS,
): Storage {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  // The file's own settings, on a short-lived connection here, so that a file that cannot be opened fails
  // the start at once; the portal's connection is then opened in a worker thread.
  const opening = new SQLite(file)
  // Takes effect only in a new, empty file: pages the retention job frees can then go back to the file system.
  opening.pragma('auto_vacuum = incremental')
  const wal = opening.pragma('journal_mode = WAL', { simple: true }) === 'wal'
  opening.close()
  // full: each commit is fsynced before the portal answers, so an acknowledged event survives power loss;
  // normal: it survives a crash of the portal, and the last commits may be lost if the machine loses power.
  // For full, SQLite itself runs as normal and the driver fsyncs the WAL after each commit, off the event loop.
  const walSyncer = synchronous === 'full' && wal ? makeWalSync(`${path.resolve(file)}-wal`) : null
  const connection = new SqliteWorkerConnection(file, [
    // a new in-memory database's, as the file's are kept in the file
    ...(wal ? [] : ['auto_vacuum = incremental']),
    `synchronous = ${walSyncer ? 'normal' : synchronous}`,
    'busy_timeout = 5000',
    'foreign_keys = ON',
    // 8 MiB: module reads measured no faster with 64 MiB, and each commit that split a B-tree page walks every
    // page the cache holds (SQLite's balance renumbers a page through the lock page's number, so truncating
    // the cache at COMMIT finds a page past the end): ~0.3 ms a commit at 64 MiB, an eighth of it at 8 MiB.
    'cache_size = -8192',
    // temp_store stays on disk: in memory it would spare the statement journals that multi-row upserts
    // spill, but SQLite's sorts would then grow without bound (see README, Errors module).
  ])
  const db = new Kysely<Database>({ dialect: new PortalSqliteDialect(connection, walSyncer, connectionWaitMs) })
  const space = sqliteSpace(db, connection, path.resolve(file))
  const invalidations = sqliteInvalidations(file === ':memory:' ? file : path.resolve(file))

  return {
    dialect: 'sqlite',
    db,
    writeTransactions: 1,
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
    // SQLite's window functions are ~2.5× slower over a month of values, but its queries cost no round trip.
    percentilesByGroup: (values, columns, percentiles) => percentilesAtRanks(values, columns, percentiles),
    // SQLite has one writer at a time: a write transaction already excludes every other claimer.
    forUpdateSkipLocked: (query) => query,
    // One SQLite file has one writer process; the in-process lock is all there is to hold.
    withExclusiveLock: (_name, run) => run(),
    // A write transaction holds the process's one connection, so nothing else writes until it ends.
    lockInTransaction: async () => {},
    // A transaction that runs holds the one writer's place: nobody else holds anything.
    tryLockInTransaction: async () => true,
    // Each row by the one-row statement: a statement writing many rows must be undoable on its own, so
    // SQLite journals the pages it changes, and past 64 KiB (a capture transaction's upserts pass it) in a
    // temporary file, at about half the cost of the writes themselves.
    async writeRows(trx, write, rows) {
      // Only a transaction holds SQLite's one connection while it runs: anywhere else, another caller's
      // transaction could be open on it.
      if (!tablesOf(trx).isTransaction || !connection.inTransaction) throw new Error('writeRows runs inside a transaction')
      if (rows.length === 0) return
      const first = write.compile(trx, rows.slice(0, 1))
      await connection.runEach(first.sql, [[...first.parameters], ...rows.slice(1).map((row) => write.values(row))])
    },
    // The one-row statement as well, prepared once per table and columns; a multi-row insert would be compiled
    // and prepared again for each row count a group commit brings.
    async insertRows(trx, table, rows) {
      if (!tablesOf(trx).isTransaction || !connection.inTransaction) throw new Error('insertRows runs inside a transaction')
      if (rows.length === 0) return
      const columns = columnsOf(rows)
      const first = tablesOf<Record<string, Record<string, unknown>>>(trx).insertInto(table).values(Object.fromEntries(columns.map((column) => [column, null]))).compile()
      await connection.runEach(first.sql, rows.map((row) => columns.map((column) => row[column] ?? null)))
    },
    eventsOf() {
      return sameDatabaseEvents(this)
    },
    space,
    layoutMigrations: sqliteLayoutMigrations,
    invalidations,
    // One connection writes: no transaction of this database waits for another.
    isConflict: () => false,
    // Extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED) share their primary code's first two words.
    isUnavailable: (error) => UNAVAILABLE_CODES.has(String((error as { code?: unknown })?.code ?? '').split('_').slice(0, 2).join('_')),
    ping: () => writeHealthProbe(db),
    async close() {
      await space.close()
      await invalidations.close()
      await db.destroy()
      await walSyncer?.close()
    },
  }
}

/** Kysely's SQLite dialect over the portal's driver. */
class PortalSqliteDialect implements Dialect {
  constructor(
    private readonly connection: SqliteWorkerConnection,
    private readonly walSyncer: WalSync | null,
    private readonly connectionWaitMs: number,
  ) {}

  createDriver = () => new PortalSqliteDriver(this.connection, this.walSyncer, this.connectionWaitMs)
  createQueryCompiler = () => new SqliteQueryCompiler()
  createAdapter = () => new SqliteAdapter()
  createIntrospector = (db: Kysely<unknown>) => new SqliteIntrospector(db)
}

/**
 * Kysely's SQLite driver over the connection in a worker thread, with a rollback that knows when SQLite
 * has rolled back already, and (given a WAL syncer) writes that resolve only once their commit is on disk.
 */
class PortalSqliteDriver implements Driver {
  /** queries and transactions that hold or wait for the one connection; with none, acquiring needs no timer */
  private users = 0
  /** settles when the query or transaction holding the connection releases it */
  private held: Promise<void> | undefined
  private release: (() => void) | undefined
  private readonly kyselyConnection: DatabaseConnection

  constructor(
    private readonly connection: SqliteWorkerConnection,
    private readonly walSyncer: WalSync | null,
    private readonly connectionWaitMs: number,
  ) {
    this.kyselyConnection = {
      async executeQuery<R>({ sql, parameters }: CompiledQuery): Promise<QueryResult<R>> {
        const { rows, changes, lastInsertRowid } = await connection.query(sql, parameters)
        if (changes === undefined) return { rows: rows as R[] }
        return { rows: [], numAffectedRows: BigInt(changes), insertId: lastInsertRowid === undefined ? undefined : BigInt(lastInsertRowid) }
      },
      streamQuery() {
        throw new Error('the SQLite driver does not stream query results')
      },
    }
  }

  async init() {}

  private async lock(): Promise<DatabaseConnection> {
    while (this.held) await this.held
    this.held = new Promise((resolve) => (this.release = resolve))
    return this.kyselyConnection
  }

  // The one connection is the pool: a caller that waited longer than the configured wait for it gets
  // PoolExhaustedError (a 503 `overloaded`), and the connection it would have got is handed on untouched.
  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.users++ === 0) return this.lock()
    const acquiring = this.lock()
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), this.connectionWaitMs)))
    const acquired = await Promise.race([acquiring, timedOut])
    clearTimeout(timer)
    if (acquired) return acquired
    void acquiring.then(() => this.releaseConnection())
    throw new PoolExhaustedError('sqlite', 1, this.connectionWaitMs)
  }

  async beginTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('begin'))
  }

  async commitTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  // SQLite rolls a transaction back by itself when its COMMIT fails on a full disk or an I/O error;
  // a plain ROLLBACK would then fail with "no transaction is active" and hide the error that says why.
  async rollbackTransaction() {
    await this.connection.rollback()
  }

  // Kysely releases the connection when a query or a transaction is done and awaits this before the
  // caller sees its result. The connection is free for others first; the caller alone waits for the fsync.
  async releaseConnection() {
    const committedWrites = this.connection.takeWrites() && !this.connection.inTransaction
    this.users--
    const release = this.release
    this.held = this.release = undefined
    release?.()
    if (committedWrites && this.walSyncer) await this.walSyncer.sync()
  }

  async destroy() {
    await this.connection.close()
  }
}
