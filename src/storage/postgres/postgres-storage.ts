import pg from 'pg'
import { Kysely, PostgresDialect, sql } from 'kysely'
import { likePattern, MAX_VALUES_PER_STATEMENT, writeHealthProbe, type Storage, type StorageOptions } from '../storage.ts'
import type { Database } from '../tables.ts'
import { trackPool } from '../../metrics/metrics.ts'

const INT8_OID = 20
// Class 08 (connection), 53 (insufficient resources), 57P (operator intervention: shutdown, crash).
const UNAVAILABLE_SQLSTATE = /^(08|53|57P)/
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'])

export function openPostgresStorage(url: string, { poolSize, queryTimeoutMs }: Pick<StorageOptions, 'poolSize' | 'queryTimeoutMs'>): Storage {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
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
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  const untrackPool = trackPool(pool)

  return {
    dialect: 'postgres',
    db,
    types: { json: 'jsonb', bigint: 'bigint', double: 'double precision' },
    parseJson: <T>(value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as T,
    jsonText: (column, key) => sql<string | null>`${sql.ref(column)} ->> ${key}`,
    jsonPathText: (column, keys) => sql<string | null>`${sql.ref(column)} #>> ${keys}::text[]`,
    containsText: (column, needle) => sql<boolean>`${sql.ref(column)} ilike ${likePattern(needle)} escape '\\'`,
    forUpdateSkipLocked: (query) => query.forUpdate().skipLocked() as typeof query,
    async withExclusiveLock(name, run) {
      const client = await pool.connect()
      try {
        await client.query('select pg_advisory_lock(hashtext($1))', [name])
        try {
          return await run()
        } finally {
          await client.query('select pg_advisory_unlock(hashtext($1))', [name])
        }
      } finally {
        client.release()
      }
    },
    async lockInTransaction(trx, name) {
      await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(trx)
    },
    // One statement per chunk of rows: each statement is a round trip to the server.
    async writeRows(trx, write, rows) {
      if (!trx.isTransaction) throw new Error('writeRows runs inside a transaction')
      if (rows.length === 0) return
      const perStatement = Math.max(1, Math.floor(MAX_VALUES_PER_STATEMENT / write.values(rows[0]).length))
      for (let start = 0; start < rows.length; start += perStatement) await trx.executeQuery(write.compile(trx, rows.slice(start, start + perStatement)))
    },
    isUnavailable(error) {
      const code = String((error as { code?: unknown })?.code ?? '')
      if (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODES.has(code)) return true
      const message = error instanceof Error ? error.message : ''
      return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(message)
    },
    ping: () => writeHealthProbe(db),
    async close() {
      untrackPool()
      await db.destroy()
    },
  }
}
