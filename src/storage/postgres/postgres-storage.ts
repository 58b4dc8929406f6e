import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely'
import { rankedPercentiles } from '../percentiles.ts'
import { columnsOf, DEFAULT_POOL_WAIT_MS, MAX_VALUES_PER_STATEMENT, PoolExhaustedError, writeHealthProbe, type Storage, type StorageOptions } from '../storage.ts'
import { tablesOf, type Database } from '../tables.ts'
import { sameDatabaseEvents } from '../event-store.ts'
import { postgresLayoutMigrations } from './postgres-migrations.ts'
import { postgresSpace } from './postgres-space.ts'
import { postgresInvalidations } from './postgres-invalidations.ts'
import { trackPool } from '../../metrics/metrics.ts'

const INT8_OID = 20
/** Rows of COPY text handed to the connection at a time (a few hundred KB). */
const COPY_ROWS_PER_CHUNK = 1_000
// Class 08 (connection), 53 (insufficient resources), 57P (operator intervention: shutdown, crash).
const UNAVAILABLE_SQLSTATE = /^(08|53|57P)/
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'])

/** PostgreSQL's `Storage.isUnavailable`: the server unreachable, out of resources (a full disk: 53100) or shutting down. */
export function isPostgresUnavailable(error: unknown): boolean {
  const code = String((error as { code?: unknown })?.code ?? '')
  if (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODES.has(code)) return true
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(message)
}

const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * A query that runs a pg submittable (a COPY stream) on the client of the transaction that executes it:
 * kysely hands a compiled query's `sql` to `pg.Client.query` as it is, and pg runs a submittable in its
 * turn, after the statements queued before it.
 */
function onThisClient(submittable: object): CompiledQuery {
  return { ...CompiledQuery.raw(''), sql: submittable as unknown as string }
}

/** A COPY text field: `\N` for no value; backslash, newline, carriage return and tab escaped (PostgreSQL's COPY, text format). */
function copyField(value: unknown): string {
  if (value === undefined || value === null) return '\\N'
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '\\N'
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return /[\\\n\r\t]/.test(text) ? text.replace(/[\\\n\r\t]/g, (char) => COPY_ESCAPES[char]) : text
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** The rows as COPY text, a chunk of lines at a time. */
function copyTextOf(rows: Record<string, unknown>[], columns: string[]): Readable {
  return Readable.from(
    (function* () {
      for (let start = 0; start < rows.length; start += COPY_ROWS_PER_CHUNK) {
        let text = ''
        for (const row of rows.slice(start, start + COPY_ROWS_PER_CHUNK)) {
          for (let index = 0; index < columns.length; index++) text += (index === 0 ? '' : '\t') + copyField(row[columns[index]])
          text += '\n'
        }
        yield text
      }
    })(),
  )
}

export function openPostgresStorage(
  url: string,
  { poolSize, queryTimeoutMs, poolWaitMs = DEFAULT_POOL_WAIT_MS }: Pick<StorageOptions, 'poolSize' | 'queryTimeoutMs' | 'poolWaitMs'>,
): Storage {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Bounds both the wait for a busy pool's next free connection and the opening of a new one.
    connectionTimeoutMillis: poolWaitMs,
    // Without it a query sent into a network partition waits for ever, and so does its request. The client
    // stays busy with the lost query until its connection resets; the pool then discards it.
    query_timeout: queryTimeoutMs,
    // epoch milliseconds fit a JavaScript number exactly; pg would otherwise return bigint columns as strings
    types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser },
  })
  // A client whose server went away emits `error`; without a listener that error would end the process.
  // The pool reports its idle clients' errors here; a checked-out client between two queries (a transaction's
  // client, an advisory lock's holder) emits on itself. Its next query fails, which the caller sees, and the
  // pool discards it on release.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  // pg-pool says this only of a wait for a busy pool's next free connection; a new connection that cannot
  // be opened in time fails otherwise ("Connection terminated due to connection timeout"): the server's fault.
  const connectWithin = async (): Promise<pg.PoolClient> => {
    try {
      return await pool.connect()
    } catch (error) {
      if (error instanceof Error && error.message === 'timeout exceeded when trying to connect') throw new PoolExhaustedError('postgres', poolSize, poolWaitMs)
      throw error
    }
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: connectWithin, end: () => pool.end() } }) })
  const invalidations = postgresInvalidations(url, db)
  const untrackPool = trackPool(pool)
  return {
    dialect: 'postgres',
    db,
    // Four measured 10–20 % more ingest than one (npm run bench -- pgstore), and eight no more than four;
    // the pool keeps connections for reads.
    writeTransactions: Math.max(1, Math.min(4, poolSize - 2)),
    types: { json: 'jsonb', bigint: 'bigint', double: 'double precision' },
    parseJson: <T>(value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as T,
    jsonText: (column, key) => sql<string | null>`${sql.ref(column)} ->> ${key}`,
    jsonPathText: (column, keys) => sql<string | null>`${sql.ref(column)} #>> ${keys}::text[]`,
    // ILIKE lowers both sides as lower() does, then matches a pattern: strpos over the lowered text is the same test,
    // without the pattern (2.85 against 3.7 s over 10 million short messages here). An ASCII needle can only match
    // ASCII letters, which lower() under the C collation folds in place of the locale's wide-character lowering: 2.2–2.6
    // against 5.7–5.9 s over 10 million messages (a C.UTF-8 database, PostgreSQL 15), the same rows.
    containsText: (column, needle) =>
      /^[\x00-\x7f]*$/.test(needle)
        ? sql<boolean>`strpos(lower(${sql.ref(column)} collate "C"), ${needle.toLowerCase()}) > 0`
        : sql<boolean>`strpos(lower(${sql.ref(column)}), lower(${needle})) > 0`,
    // one windowed pass: a query per group would cost a round trip each
    percentilesByGroup: (values, columns, percentiles) =>
      rankedPercentiles(values, columns.map((name) => ({ name, expression: sql.ref(name) })), percentiles, db),
    forUpdateSkipLocked: (query) => query.forUpdate().skipLocked(),
    // The lock's session is a connection of its own: `run` queries through the pool, which may have just one.
    async withExclusiveLock(name, run) {
      const client = new pg.Client({ connectionString: url })
      client.on('error', () => {})
      await client.connect()
      try {
        await client.query('select pg_advisory_lock(hashtext($1))', [name])
        try {
          return await run()
        } finally {
          await client.query('select pg_advisory_unlock(hashtext($1))', [name])
        }
      } finally {
        await client.end().catch(() => {})
      }
    },
    // A row lock on the name's own row, not an advisory lock: those take a 64-bit key, so two names
    // could share one. `do update … where false` locks an existing row without writing it again.
    // Share mode is `for share` on the same row, after making sure it exists. The names are taken in
    // byte order (PostgreSQL's "C"), one statement per run of names in one mode.
    async lockInTransaction(trx, names, shared) {
      const unique = [...new Set(typeof names === 'string' ? [names] : names)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      for (let start = 0; start < unique.length; ) {
        const isShared = shared?.has(unique[start]) ?? false
        let end = start + 1
        while (end < unique.length && (shared?.has(unique[end]) ?? false) === isShared) end++
        const run = unique.slice(start, end)
        start = end
        if (!isShared) {
          await sql`insert into transaction_locks (name) select name from unnest(${run}::text[]) as name order by name collate "C"
            on conflict (name) do update set name = excluded.name where false`.execute(trx)
          continue
        }
        await sql`insert into transaction_locks (name) select name from unnest(${run}::text[]) as name order by name collate "C" on conflict (name) do nothing`.execute(trx)
        await sql`select name from transaction_locks where name = any(${run}::text[]) order by name collate "C" for share`.execute(trx)
      }
    },
    // `skip locked` passes over the row another transaction has locked. The row is made outside `trx` first:
    // inside, an insert would wait for a transaction that has inserted it and not yet committed.
    async tryLockInTransaction(trx, name) {
      await sql`insert into transaction_locks (name) values (${name}) on conflict (name) do nothing`.execute(db)
      const { rows } = await sql`select name from transaction_locks where name = ${name} for update skip locked`.execute(trx)
      return rows.length === 1
    },
    // One statement per chunk of rows: each statement is a round trip to the server.
    async writeRows(trx, write, rows) {
      const db = tablesOf(trx)
      if (!db.isTransaction) throw new Error('writeRows runs inside a transaction')
      if (rows.length === 0) return
      const perStatement = Math.max(1, Math.floor(MAX_VALUES_PER_STATEMENT / write.values(rows[0]).length))
      for (let start = 0; start < rows.length; start += perStatement) await db.executeQuery(write.compile(trx, rows.slice(start, start + perStatement)))
    },
    // COPY, PostgreSQL's bulk path: the server parses tab-separated text rather than a JSON document per chunk,
    // about a third less of its CPU a row on realistic logs, and a third less of this thread's.
    async insertRows(trx, table, rows) {
      if (rows.length === 0) return
      const columns = columnsOf(rows)
      const copy = copyFrom(`copy ${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) from stdin`)
      // Submitted first: a stream that is never submitted would wait for ever for the server's go-ahead.
      await tablesOf(trx).executeQuery(onThisClient(copy))
      await pipeline(copyTextOf(rows, columns), copy)
    },
    // The event tables are PostgreSQL's own: an ingest is one transaction, no outbox.
    eventsOf() {
      return sameDatabaseEvents(this)
    },
    space: postgresSpace(db),
    layoutMigrations: postgresLayoutMigrations,
    invalidations,
    // 40P01 deadlock_detected, 40001 serialization_failure
    isConflict: (error) => /^40(P01|001)$/.test(String((error as { code?: unknown })?.code ?? '')),
    isUnavailable: isPostgresUnavailable,
    ping: () => writeHealthProbe(db),
    async close() {
      untrackPool()
      await invalidations.close()
      await db.destroy()
    },
  }
}
