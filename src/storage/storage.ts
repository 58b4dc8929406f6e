import type { Compilable, CompiledQuery, Kysely, RawBuilder, SelectQueryBuilder } from 'kysely'
import type { PercentileRow, ValuesQuery } from './percentiles.ts'
import type { Migration } from './migrations.ts'
import { tablesOf, type Connection, type Database } from './tables.ts'
import type { EventOutbox, EventStore } from './event-store.ts'

/** Column types that differ between the databases; migrations take them instead of asking which database runs. */
export interface ColumnTypes {
  /** a JSON document: jsonb on PostgreSQL, text on SQLite */
  json: 'jsonb' | 'text'
  /** epoch milliseconds and counters: bigint on PostgreSQL, integer on SQLite */
  bigint: 'bigint' | 'integer'
  /** a float: double precision on PostgreSQL, real on SQLite */
  double: 'double precision' | 'real'
}

/**
 * The one storage interface. Everything outside `storage/` talks SQL through `db` (Kysely) and asks
 * this object for the few expressions that differ between SQLite and PostgreSQL.
 */
export interface Storage {
  readonly dialect: 'sqlite' | 'postgres'
  readonly db: Kysely<Database>
  readonly types: ColumnTypes
  /** The value stored in a json column, for a value read back from one. */
  parseJson<T = unknown>(value: unknown): T
  /** `column ->> key` as text, for filters on a field inside a JSON document. */
  jsonText(column: string, key: string): RawBuilder<string | null>
  /** The text at a nested path of a JSON document (`column #>> '{a,b}'`), for filters on context fields. */
  jsonPathText(column: string, keys: string[]): RawBuilder<string | null>
  /** Case-insensitive substring match of `column` against `needle` (LIKE wildcards in it are literal). */
  containsText(column: string, needle: string): RawBuilder<boolean>
  /**
   * Locks the selected rows until the transaction ends and skips rows another transaction holds, so
   * that several portal processes claim disjoint rows (a work queue).
   */
  forUpdateSkipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>
  /** Runs `run` while holding a lock that other portal processes sharing this database respect. */
  withExclusiveLock<T>(name: string, run: () => Promise<T>): Promise<T>
  /**
   * Inside `trx`, waits for and takes a lock on each of `names` that lasts until `trx` ends, respected
   * by the transactions of every portal process sharing this database. Two names never share a lock.
   * The names of one call are taken in one order; a caller that takes locks in several calls keeps
   * the same order of calls everywhere (error groups: fingerprints, then groups). The names in `shared`
   * are taken in share mode: any number of transactions hold those together, while a transaction
   * taking the name without `shared` waits for them all and excludes them.
   */
  lockInTransaction(trx: Connection, names: string | readonly string[], shared?: ReadonlySet<string>): Promise<void>
  /** Takes the lock on `name` as `lockInTransaction` does, or answers false at once when another transaction holds it. */
  tryLockInTransaction(trx: Connection, name: string): Promise<boolean>
  /**
   * How many group-commit transactions (src/storage/group-commit.ts) one portal writes at once: SQLite has
   * one writer; on PostgreSQL the next transaction's statements run while one waits for its commit's fsync.
   */
  readonly writeTransactions: number
  /**
   * Writes `rows` with `write` (see `rowWrite`) inside the transaction `trx`, the way this database
   * writes many rows fastest.
   */
  writeRows<R>(trx: Connection, write: ListStatement<R>, rows: R[]): Promise<void>
  /**
   * Inserts plain `rows` (no conflict handling) into `table` inside `trx`, the way this database takes many
   * rows fastest. A column a row lacks is stored as null.
   */
  insertRows(trx: Connection, table: string, rows: Record<string, unknown>[]): Promise<void>
  /**
   * Nearest-rank `percentiles` of `value`, with its count, min, max and avg, per group of `columns` over
   * `values`: the same figures on either database, each computed the way it answers fastest over a month
   * of values (measured with `npm run bench -- reads`).
   */
  percentilesByGroup(values: ValuesQuery, columns: string[], percentiles: readonly number[]): Promise<PercentileRow[]>
  /** Where the event rows of `table` (a module's) are written and read (docs/event-store.md). */
  eventsOf(table: string): EventStore
  /** The event tables this storage keeps in its columnar event store (DuckDB); absent, none. */
  readonly columnarTables?: readonly string[]
  /** The outbox that feeds the columnar event store, and that store's state; absent where events are written with the state. */
  readonly eventOutbox?: EventOutbox
  /**
   * Set where this database's writes run on the event loop's thread (SQLite's, in a file): a worker thread
   * that opens the same database with `StorageOptions.writerThread` (this lock) writes beside this storage,
   * the two taking turns (the ingest writer, src/ingest/ingest-writer.ts).
   */
  readonly writerLock?: SharedArrayBuffer
  /** What retention and size reads need that each database does its own way (docs/retention.md). */
  readonly space: SpaceManagement
  /**
   * Migrations of this database's own layout (PostgreSQL: event tables partitioned by day; SQLite:
   * event indexes rebuilt ascending), applied after the shared ones.
   */
  readonly layoutMigrations: Migration[]
  /** Tells the portals sharing this database that something they keep in memory changed. */
  readonly invalidations: InvalidationChannel
  /**
   * True when an error means the database (or the event store) cannot be reached, read or written right now: an
   * outage (a 503 and a retry), not a bug. The one place that tells the two apart, per database.
   */
  isUnavailable(error: unknown): boolean
  /**
   * True when an error ended a transaction only because another ran at the same time (PostgreSQL's deadlock
   * detector or a serialization failure): the other has gone on, so running it again can succeed.
   */
  isConflict(error: unknown): boolean
  /**
   * Writes one consistent copy of this database's files into the empty folder `destination` while the portal
   * runs, and returns the files written. Absent where the database is not the portal's own files (PostgreSQL:
   * pg_dump backs it up) or has none (an in-memory SQLite).
   */
  backup?(destination: string): Promise<string[]>
  /** Commits a write: a database that answers reads but refuses writes (disk full, I/O errors) fails it. */
  ping(): Promise<void>
  close(): Promise<void>
}

/** Partitions, returned space and sizes: the parts of retention that differ between the databases. */
export interface SpaceManagement {
  /** Creates the daily partitions of a time-partitioned event table up to `until`; returns their names (none for other tables). */
  createPartitions(table: string, until: number): Promise<string[]>
  /** Drops the partitions of `table` whose every row is older than `cutoff`; returns their names (none for other tables). */
  dropPartitionsBefore(table: string, cutoff: number): Promise<string[]>
  /** Gives space freed by deletes back to the file system in bounded steps, stopping early when `stop()` says so; returns the bytes given back. */
  returnFreeSpace(stop: () => boolean): Promise<number>
  /** Bytes on disk of each table with its indexes and partitions; may be up to a minute old. */
  tableSizes(tables: string[]): Promise<Record<string, number>>
  close(): Promise<void>
}

/**
 * A channel of short messages (topics) to every portal process sharing a database, for what they keep
 * in memory: a revoked key must stop working everywhere at once, not when a cache entry expires.
 */
export interface InvalidationChannel {
  /** Sends `topic` to every subscriber of every portal, this one's included; inside `trx`, once it commits. */
  publish(topic: string, trx?: Connection): Promise<void>
  /**
   * Calls `listener` with each topic published, and with null when messages may have been missed (the
   * channel was down and is back): a listener then forgets everything. Returns the unsubscribe.
   */
  subscribe(listener: (topic: string | null) => void): () => void
  close(): Promise<void>
}

/**
 * No connection came free within the wait allowed while the database itself answers: the portal has
 * more work than connections (a 503 `overloaded`), which is not the database being down.
 */
export class PoolExhaustedError extends Error {
  constructor(
    /** the pool, as an operator finds it in the configuration: `postgres` (DATABASE_POOL_SIZE connections) or `sqlite` (one) */
    readonly pool: 'postgres' | 'sqlite',
    readonly size: number,
    readonly waitedMs: number,
  ) {
    super(`no connection of the ${pool} database pool (${size} connection${size === 1 ? '' : 's'}) came free within ${waitedMs} ms`)
  }
}

/**
 * DuckDB refused a query the memory it needed (past its `memory_limit`, 80 % of RAM): that query's failure, a 503
 * `overloaded` to retry once fewer queries hold memory, not the store being down nor a bug.
 */
export class StoreOutOfMemoryError extends Error {}

/**
 * A store that cannot be read or written now (a full disk, a read-only file system, a handle its engine gave up on
 * after a failed write): a 503 `database_unavailable`, while the portal retries and reopens it when it can.
 * `reason` is what an operator is told (health, logs): never a path or a secret.
 */
export class StoreUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(`the event store is unavailable: ${reason}`)
  }
}

/** DATABASE_POOL_WAIT_MS's default. */
export const DEFAULT_POOL_WAIT_MS = 5_000

export interface StorageOptions {
  poolSize: number
  /** how long a query waits for a connection of the pool before failing with PoolExhaustedError */
  poolWaitMs?: number
  /** PostgreSQL only: SQLite's calls are synchronous and bounded by its busy timeout */
  queryTimeoutMs: number
  sqliteSynchronous: 'full' | 'normal'
  /**
   * SQLite only: with `duckdb`, the event rows of `columnarTables` live in events.duckdb beside the database file;
   * unset, each table's rows decide (`withDuckdbEvents`: DuckDB but for a table whose rows in SQLite predate it)
   */
  eventStore?: 'sqlite' | 'duckdb'
  columnarTables?: string[]
  /** by event table, the payload fields its columns copy (`EventModule.promotedFields`): stored there only, in any store */
  promotedFields?: Record<string, readonly string[]>
  /** SQLite with DuckDB only: by event table, its text columns whose values seldom repeat (`EventModule.freeTextColumns`) */
  freeTextColumns?: Record<string, readonly string[]>
  /** PostgreSQL only: how long opening waits for a server that is not up yet, each retry told to `onStartupWait` */
  startupWaitMs?: number
  onStartupWait?: (message: string) => void
  /** SQLite only: opens the storage of a worker thread that writes beside the event loop thread's */
  writerThread?: WriterThread
}

/** A worker thread's turns at a SQLite writer: the event loop thread's `Storage.writerLock`, and this thread's name in it (`WriterLock.newHolder`). */
export interface WriterThread {
  lock: SharedArrayBuffer
  holder: number
  /** the event loop thread's `Storage.columnarTables`, whose rows this thread writes to their outbox */
  columnarTables: readonly string[]
}

/** `ping` for both dialects: one row upserted and committed. */
export async function writeHealthProbe(db: Kysely<Database>): Promise<void> {
  const checkedAt = Date.now()
  await db
    .insertInto('health_probe')
    .values({ id: 1, checked_at: checkedAt })
    .onConflict((conflict) => conflict.column('id').doUpdateSet({ checked_at: checkedAt }))
    .execute()
}

/**
 * A query built and compiled once, then run with other values: for the lookups every request makes,
 * where Kysely building and compiling the query (~10 µs) cost more than the database's answer.
 * `build` must use each parameter exactly once, in order, and no other value; this is checked here.
 */
export function precompiled<P extends unknown[], R>(db: Connection, build: (...params: P) => Compilable<R>, sample: P) {
  const compiled = build(...sample).compile()
  if (compiled.parameters.length !== sample.length || sample.some((value, index) => compiled.parameters[index] !== value)) {
    throw new Error(`precompiled: the query must take exactly its ${sample.length} parameters, in order: ${compiled.sql}`)
  }
  return async (...params: P): Promise<R[]> => (await tablesOf(db).executeQuery<R>({ ...compiled, parameters: params })).rows
}

// SQLite allows 32,766 bound values a statement and PostgreSQL 65,535; stay well under both.
export const MAX_VALUES_PER_STATEMENT = 30_000

/** Every column any of `rows` has, for `Storage.insertRows`. */
export function columnsOf(rows: Record<string, unknown>[]): string[] {
  const columns = new Set<string>()
  for (const row of rows) for (const column in row) columns.add(column)
  return [...columns]
}

/** List lengths whose statement stays compiled; longer lists (a large ingest batch's) are compiled each time. */
const MAX_PRECOMPILED_LENGTH = 64

/**
 * `precompiled` for a statement over a list (keys to look up, rows to write): compiled once for each
 * list length and database, then bound to other items' values. `values(item)` gives an item's
 * parameters in the order `build` binds them, and `build` binds nothing else; this is checked at each
 * length's first compilation. `O` is a row of what the statement returns.
 */
export class ListStatement<T, O = unknown> {
  // Keyed by the database's adapter, which a Kysely instance shares with its transactions: one process
  // may hold a SQLite and a PostgreSQL portal (the tests do), and their SQL differs.
  private readonly byDatabase = new WeakMap<object, Map<number, CompiledQuery<O>>>()

  constructor(
    private readonly build: (db: Kysely<Database>, items: T[]) => Compilable<O>,
    readonly values: (item: T) => unknown[],
  ) {}

  /** The statement for `items`, bound to their values. */
  compile(db: Connection, items: T[]): CompiledQuery<O> {
    const parameters: unknown[] = []
    for (const item of items) parameters.push(...this.values(item))
    const adapter = db.getExecutor().adapter
    let byLength = this.byDatabase.get(adapter)
    if (!byLength) this.byDatabase.set(adapter, (byLength = new Map()))
    const compiled = byLength.get(items.length)
    if (compiled) return { ...compiled, parameters }
    const built = this.build(tablesOf(db), items).compile()
    if (built.parameters.length !== parameters.length || parameters.some((value, index) => !Object.is(built.parameters[index], value))) {
      throw new Error(`ListStatement: the statement must bind each item's values, in order: ${built.sql}`)
    }
    if (items.length <= MAX_PRECOMPILED_LENGTH) byLength.set(items.length, built)
    return built
  }

  async execute(db: Connection, items: T[]): Promise<O[]> {
    return (await tablesOf(db).executeQuery(this.compile(db, items))).rows
  }
}

/**
 * An insert or upsert of rows, for `Storage.writeRows`: `build` gets rows holding exactly `columns` (every
 * column of `R`), in that order, whatever else or in whatever order the given objects hold.
 */
export function rowWrite<R>(columns: readonly (keyof R & string)[], build: (db: Kysely<Database>, rows: R[]) => Compilable<unknown>) {
  return new ListStatement<R>(
    (db, rows) => build(db, rows.map((row) => Object.fromEntries(columns.map((column) => [column, row[column]])) as R)),
    (row) => columns.map((column) => row[column]),
  )
}

/** Escapes LIKE wildcards so user text matches literally (with `ESCAPE '\'`). */
export function likePattern(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}
