import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'

/** Where the reads of the event store run, and what they pass through (src/storage/duckdb/duckdb-events.ts). */
export interface DuckdbReads {
  /** the connection reads run on now: the store may have been reopened since the last; throws while it is unavailable */
  connection(): DuckDBConnection
  /**
   * runs before a query first reads a table in one use of the connection (one query, or the queries of a
   * `connection()`): the event store's read barrier, given the tables the query names (none known, as in raw SQL: all)
   */
  beforeQuery(tables: string[] | undefined): Promise<void>
  /** what a query that failed throws instead of DuckDB's error: an outage becomes StoreUnavailableError */
  failed(error: unknown): unknown
}

/**
 * Kysely over one DuckDB connection. DuckDB speaks PostgreSQL's SQL for everything the module reads
 * build ($n parameters, `->>`, `ilike`, window functions), so PostgreSQL's compiler serves; the
 * driver is the few lines that run a compiled query; BIGINTs come back as numbers. (kysely-duckdb 0.4 on npm would add
 * @duckdb/duckdb-wasm and web-worker as peers for the same few lines.)
 */
export class DuckdbDialect implements Dialect {
  private readonly driver: DuckdbDriver

  constructor(reads: DuckdbReads) {
    this.driver = new DuckdbDriver(reads)
  }

  /** Settles once no query runs on the connection (the one running may still end): before the connection is closed. */
  idle(): Promise<void> {
    return this.driver.idle()
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter()
  }
  createDriver(): Driver {
    return this.driver
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }
}

/** One connection, used by one query or transaction at a time (DuckDB's transactions are per connection). */
class DuckdbDriver implements Driver {
  private queue: Promise<void> = Promise.resolve()
  private destroyed = false
  private readonly wrapped: DuckdbConnection

  constructor(reads: DuckdbReads) {
    this.wrapped = new DuckdbConnection(reads)
  }

  async init() {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.destroyed) throw new Error('the DuckDB event store is closed')
    const previous = this.queue
    let release!: () => void
    this.queue = new Promise((resolve) => (release = resolve))
    await previous
    this.wrapped.release = release
    this.wrapped.passed = new Set()
    return this.wrapped
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings) {
    await connection.executeQuery(CompiledQuery.raw('begin transaction'))
  }
  async commitTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }
  async rollbackTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }
  async releaseConnection(connection: DatabaseConnection) {
    ;(connection as DuckdbConnection).release()
  }
  // Waits for the query in flight: a connection closed under a running query makes DuckDB destroy its
  // context from the query's own thread, which then waits forever on the lock it holds (a SIGTERM under
  // log searches hung `portal serve` at its exit, joining libuv's pool).
  async destroy() {
    this.destroyed = true
    await this.queue
  }

  async idle() {
    for (let queue = this.queue; ; queue = this.queue) {
      await queue
      if (queue === this.queue) return
    }
  }
}

class DuckdbConnection implements DatabaseConnection {
  release: () => void = () => {}
  /** the tables whose barrier this use of the connection has passed; `all` once a query named none */
  passed = new Set<string>()

  constructor(private readonly reads: DuckdbReads) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.passed.has(ALL)) {
      const tables = query.query.kind === 'RawNode' ? undefined : [...tablesIn(query.query)].filter((table) => !this.passed.has(table))
      if (tables === undefined || tables.length > 0) await this.reads.beforeQuery(tables)
      for (const table of tables ?? [ALL]) this.passed.add(table)
    }
    const connection = this.reads.connection()
    const reader = await connection.runAndReadAll(query.sql, query.parameters.map(toDuckdbValue)).catch((error: unknown) => {
      throw this.reads.failed(error)
    })
    const writes = /^\s*(insert|update|delete)\b/i.test(query.sql)
    const rows = (writes ? [] : reader.getRowObjectsJS().map(numbersOfBigints)) as R[]
    return { rows, numAffectedRows: writes ? BigInt(reader.rowsChanged) : undefined }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the DuckDB event store does not stream')
  }
}

const ALL = '*'

/** The tables a query's operation tree names (Kysely's TableNodes, at any depth: subqueries, joins, unions). */
function tablesIn(node: unknown, found = new Set<string>()): Set<string> {
  if (typeof node !== 'object' || node === null) return found
  const table = node as { kind?: string; table?: { identifier?: { name?: string } } }
  if (table.kind === 'TableNode' && table.table?.identifier?.name) found.add(table.table.identifier.name)
  for (const child of Object.values(node)) tablesIn(child, found)
  return found
}

// Epoch milliseconds and counts fit a double exactly; the portal's readers (and JSON) take numbers.
function numbersOfBigints(row: Record<string, unknown>): Record<string, unknown> {
  for (const key in row) if (typeof row[key] === 'bigint') row[key] = Number(row[key])
  return row
}

function toDuckdbValue(value: unknown): DuckDBValue {
  if (typeof value === 'boolean' || typeof value === 'string' || typeof value === 'bigint' || value === null) return value
  if (typeof value === 'number') return Number.isInteger(value) && Number.isSafeInteger(value) ? BigInt(value) : value
  if (value === undefined) return null
  throw new Error(`a DuckDB query parameter must be a string, number, bigint, boolean or null, not ${typeof value}`)
}
