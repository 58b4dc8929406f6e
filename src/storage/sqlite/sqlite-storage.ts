import fs from 'node:fs'
import path from 'node:path'
import SQLite from './better-sqlite3.ts'
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
import { SqliteReader } from './sqlite-reader.ts'
import { WriterLock } from './writer-lock.ts'
import type { WriterThread } from '../storage.ts'
import { copySqliteDatabase } from './sqlite-backup.ts'
import { fileSystemStartupError } from '../../startup.ts'

// SQLite's own, and the file system's that the WAL's fsync can fail with.
const UNAVAILABLE_CODES = new Set(['SQLITE_READONLY', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_BUSY', 'SQLITE_CORRUPT', 'EIO', 'ENOSPC', 'EDQUOT', 'EROFS', 'EFBIG'])

const STATEMENT_CACHE_SIZE = 500

/** SQLite's `Storage.isUnavailable`. Extended codes (SQLITE_IOERR_WRITE, SQLITE_IOERR_SHMSIZE) share their primary code's first two words. */
export function isSqliteUnavailable(error: unknown): boolean {
  return UNAVAILABLE_CODES.has(String((error as { code?: unknown })?.code ?? '').split('_').slice(0, 2).join('_'))
}

/**
 * `makeWalSync` is for the tests, which watch when the WAL is synced. `writerThread` opens the storage of a
 * worker thread that writes beside the event loop's (`Storage.writerLock`): its writes take turns with the
 * event loop thread's through that lock, and it has no reader thread of its own.
 */
/** The database file, its folder created if need be; one the file system refuses is a StartupError naming DATABASE_URL. */
function openDatabaseFile(file: string): SQLite.Database {
  if (file === ':memory:') return new SQLite(file)
  const folder = path.dirname(path.resolve(file))
  try {
    fs.mkdirSync(folder, { recursive: true })
    return new SQLite(file)
  } catch (error) {
    throw fileSystemStartupError(error, 'DATABASE_URL', folder)
  }
}

export function openSqliteStorage(
  file: string,
  synchronous: 'full' | 'normal',
  makeWalSync: (walFile: string) => WalSync = walSync,
  connectionWaitMs = DEFAULT_POOL_WAIT_MS,
  writerThread?: WriterThread,
): Storage {
  const database = openDatabaseFile(file)
  // Takes effect only in a new, empty file: pages the retention job frees can then go back to the file system.
  database.pragma('auto_vacuum = incremental')
  const wal = database.pragma('journal_mode = WAL', { simple: true }) === 'wal'
  // full: each commit is fsynced before the portal answers, so an acknowledged event survives power loss;
  // normal: it survives a crash of the portal, and the last commits may be lost if the machine loses power.
  // For full, SQLite itself runs as normal and the driver fsyncs the WAL after each commit, off the event loop.
  const walSyncer = synchronous === 'full' && wal ? makeWalSync(`${path.resolve(file)}-wal`) : null
  database.pragma(`synchronous = ${walSyncer ? 'normal' : synchronous}`)
  database.pragma('foreign_keys = ON')
  // Both connections'. 8 MiB of cache: module reads measured no faster with 64 MiB, and each commit that split
  // a B-tree page walks every page the cache holds (SQLite's balance renumbers a page through the lock page's
  // number, so truncating the cache at COMMIT finds a page past the end): ~0.3 ms a commit at 64 MiB, an eighth
  // of it at 8 MiB.
  const connectionPragmas = ['busy_timeout = 5000', 'cache_size = -8192']
  for (const pragma of connectionPragmas) database.pragma(pragma)
  // temp_store stays on disk: in memory it would spare the statement journals that multi-row upserts
  // spill, but SQLite's sorts would then grow without bound (see README, Errors module).
  const statements = new StatementCache(database)
  // Reads outside a transaction run on a read-only connection in a worker thread: a long one no longer stalls
  // the event loop, nor waits for the writer. Not for an in-memory database (one connection is all of it), nor
  // without WAL, where a reader would block the writer's commits.
  const threaded = wal && file !== ':memory:'
  const reader = threaded && !writerThread ? new SqliteReader(file, connectionPragmas, STATEMENT_CACHE_SIZE) : null
  // With WAL the ingest writer's thread can write to the file too (in-memory, the one connection is the database).
  const lock = threaded ? new WriterLock(writerThread?.lock) : null
  const turns = lock && { lock, holder: writerThread?.holder ?? WriterLock.MAIN }
  const db = new Kysely<Database>({ dialect: new PortalSqliteDialect(statements, turns, reader, walSyncer, connectionWaitMs) })
  const space = sqliteSpace(db, database, path.resolve(file))
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
      if (!tablesOf(trx).isTransaction || !database.inTransaction) throw new Error('writeRows runs inside a transaction')
      if (rows.length === 0) return
      const first = write.compile(trx, rows.slice(0, 1))
      const statement = statements.prepare(first.sql)
      statement.run(first.parameters)
      for (let index = 1; index < rows.length; index++) statement.run(write.values(rows[index]))
    },
    // The one-row statement as well, prepared once per table and columns; a multi-row insert would be compiled
    // and prepared again for each row count a group commit brings.
    async insertRows(trx, table, rows) {
      if (!tablesOf(trx).isTransaction || !database.inTransaction) throw new Error('insertRows runs inside a transaction')
      if (rows.length === 0) return
      const columns = columnsOf(rows)
      const first = tablesOf<Record<string, Record<string, unknown>>>(trx).insertInto(table).values(Object.fromEntries(columns.map((column) => [column, null]))).compile()
      const statement = statements.prepare(first.sql)
      for (const row of rows) statement.run(columns.map((column) => row[column] ?? null))
    },
    eventsOf() {
      return sameDatabaseEvents(this)
    },
    writerLock: lock && !writerThread ? lock.shared : undefined,
    space,
    layoutMigrations: sqliteLayoutMigrations,
    invalidations,
    // One connection writes: no transaction of this database waits for another.
    isConflict: () => false,
    isUnavailable: isSqliteUnavailable,
    ping: () => writeHealthProbe(db),
    backup: file === ':memory:' ? undefined : async (destination) => [await copySqliteDatabase(path.resolve(file), destination)],
    async close() {
      await space.close()
      await invalidations.close()
      await db.destroy()
      // Kysely destroys its driver only if a query ran: a storage closed unused (a start refused) closes its
      // connections here, or the reader's thread keeps the process alive.
      await reader?.close()
      statements.close()
      await walSyncer?.close()
    },
  }
}

/** Kysely's SQLite dialect over the portal's driver. */
class PortalSqliteDialect implements Dialect {
  constructor(
    private readonly statements: StatementCache,
    private readonly turns: WriterTurns | null,
    private readonly reader: SqliteReader | null,
    private readonly walSyncer: WalSync | null,
    private readonly connectionWaitMs: number,
  ) {}

  createDriver = () => new PortalSqliteDriver(this.statements, this.turns, this.reader, this.walSyncer, this.connectionWaitMs)
  createQueryCompiler = () => new SqliteQueryCompiler()
  createAdapter = () => new SqliteAdapter()
  createIntrospector = (db: Kysely<unknown>) => new SqliteIntrospector(db)
}

/** The turns this thread's writing connection takes with the other thread's, and which thread this is. */
interface WriterTurns {
  lock: WriterLock
  holder: number
}

/**
 * The portal's SQLite driver. Each caller gets a handle: its reads outside a transaction go to the reader
 * in a worker thread; its first write or BEGIN takes this thread's writing connection (with a statement
 * cache), and then its turn among the threads that write, which it holds until it is released. The rollback
 * knows when SQLite has rolled back already, and (given a WAL syncer) writes resolve only once their commit
 * is on disk.
 */
class PortalSqliteDriver implements Driver {
  /** callers that hold or wait for the writing connection; with none, taking it needs no timer */
  private users = 0
  /** settles when the caller holding the writing connection releases it */
  private held: Promise<void> | undefined
  private release: (() => void) | undefined

  constructor(
    private readonly statements: StatementCache,
    private readonly turns: WriterTurns | null,
    private readonly reader: SqliteReader | null,
    private readonly walSyncer: WalSync | null,
    private readonly connectionWaitMs: number,
  ) {}

  async init() {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new SqliteHandle(this)
  }

  async run<R>(handle: SqliteHandle, { sql, parameters }: CompiledQuery): Promise<QueryResult<R>> {
    if (!handle.writing) {
      if (this.reader && this.statements.get(sql).readonly) return { rows: (await this.reader.query(sql, parameters)) as R[] }
      await this.takeWriter(handle)
    }
    const statement = this.statements.prepare(sql)
    if (statement.reader) return { rows: statement.all(parameters) as R[] }
    const { changes, lastInsertRowid } = statement.run(parameters)
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) }
  }

  // The writing connection is the pool: a caller that waited longer than the configured wait for it (or for
  // its thread's turn) gets PoolExhaustedError (a 503 `overloaded`), and the connection it would have got is
  // handed on untouched.
  private async takeWriter(handle: SqliteHandle) {
    const waiting = this.users++ > 0 || this.turns?.lock.taken === true
    const taking = (async () => {
      while (this.held) await this.held
      this.held = new Promise((resolve) => (this.release = resolve))
      await this.turns?.lock.acquire(this.turns.holder)
    })()
    if (waiting) {
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.connectionWaitMs)))
      const taken = await Promise.race([taking.then(() => true), timedOut])
      clearTimeout(timer)
      if (!taken) {
        void taking.then(() => this.releaseWriter())
        throw new PoolExhaustedError('sqlite', 1, this.connectionWaitMs)
      }
    }
    await taking
    handle.writing = true
  }

  private releaseWriter() {
    this.turns?.lock.release()
    this.users--
    const release = this.release
    this.held = this.release = undefined
    release?.()
  }

  async beginTransaction(handle: SqliteHandle) {
    await this.takeWriter(handle)
    await this.run(handle, CompiledQuery.raw('begin'))
  }

  async commitTransaction(handle: SqliteHandle) {
    await this.run(handle, CompiledQuery.raw('commit'))
  }

  // SQLite rolls a transaction back by itself when its COMMIT fails on a full disk or an I/O error;
  // a plain ROLLBACK would then fail with "no transaction is active" and hide the error that says why.
  async rollbackTransaction(handle: SqliteHandle) {
    if (this.statements.database.inTransaction) await this.run(handle, CompiledQuery.raw('rollback'))
  }

  // Kysely releases the connection when a query or a transaction is done and awaits this before the
  // caller sees its result. The writer is free for others first; the caller alone waits for the fsync.
  async releaseConnection(handle: SqliteHandle) {
    if (!handle.writing) return
    handle.writing = false
    const committedWrites = this.statements.takeWrites() && !this.statements.database.inTransaction
    this.releaseWriter()
    if (committedWrites && this.walSyncer) await this.walSyncer.sync()
  }

  async destroy() {
    await this.reader?.close()
    this.statements.close()
  }
}

/** One caller's use of the driver, from acquiring to releasing. */
class SqliteHandle implements DatabaseConnection {
  /** holds the writing connection */
  writing = false

  constructor(private readonly driver: PortalSqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.run<R>(this, query)
  }

  streamQuery(): never {
    throw new Error('the SQLite driver does not stream query results')
  }
}

// Statements that only delimit a transaction; what it wrote is marked by the statements inside it.
const TRANSACTION_CONTROL = /^\s*(begin|commit|end|rollback|savepoint|release)\b/i

/**
 * Kysely prepares every query anew; most of the portal's statements repeat, and preparing is not free.
 * Also notes whether the writer ran a statement that writes, so that its commit is synced.
 */
class StatementCache {
  private readonly cache = new Map<string, { statement: SQLite.Statement; writes: boolean }>()
  private wrote = false

  constructor(readonly database: SQLite.Database) {}

  /** The statement for `sql`, to look at. */
  get(sql: string): SQLite.Statement {
    return this.entry(sql).statement
  }

  /** The statement for `sql`, which the caller holding the writing connection is about to run. */
  prepare(sql: string): SQLite.Statement {
    const entry = this.entry(sql)
    if (entry.writes) this.wrote = true
    return entry.statement
  }

  private entry(sql: string) {
    let entry = this.cache.get(sql)
    if (!entry) {
      if (this.cache.size >= STATEMENT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!)
      const statement = this.database.prepare(sql)
      entry = { statement, writes: !statement.readonly && !TRANSACTION_CONTROL.test(sql) }
      this.cache.set(sql, entry)
    }
    return entry
  }

  /** Whether a writing statement ran since the last call. */
  takeWrites(): boolean {
    const wrote = this.wrote
    this.wrote = false
    return wrote
  }

  close() {
    this.database.close()
  }
}
