import type { Kysely } from 'kysely'
import { MAX_VALUES_PER_STATEMENT, type Storage } from './storage.ts'
import { tablesOf, type Connection, type Database } from './tables.ts'

/** Event tables reached by the name a module gives: any columns. */
type EventTables = Record<string, Record<string, unknown>>

/** A module's event table in a columnar store, with the payload fields its columns copy (`EventModule.promotedFields`). */
export interface ColumnarTable {
  table: string
  promotedFields: string[]
}

/**
 * Where a module's event rows are written and read (docs/event-store.md): the same database as `db`
 * (PostgreSQL, SQLite without EVENT_STORE=duckdb), or DuckDB fed through a SQLite outbox. Its helpers
 * build expressions in the dialect of `db` here, which may differ from `Storage.db`'s. A store may keep
 * a promoted field in its column only, so `data` is read through `dataOf`, and `jsonText` and
 * `jsonPathText` over `data` find the promoted fields wherever they are kept.
 */
export interface EventStore extends Pick<Storage, 'jsonText' | 'jsonPathText' | 'containsText' | 'percentilesByGroup'> {
  /** Reads of the event table; a read made after an ingest's 200 sees its events. */
  readonly db: Kysely<Database>
  /** Columns a read selects beside `data` for `dataOf`. */
  readonly dataColumns: readonly string[]
  /** The payload as ingested, from a row read with `data` and `dataColumns`. */
  dataOf(row: Record<string, unknown>): Record<string, unknown>
  /** Writes one module's event rows inside the ingest transaction `trx` (of `Storage.db`): durable once it commits. */
  append(trx: Connection, table: string, rows: Record<string, unknown>[]): Promise<void>
}

/** The event store of a database that holds its event tables itself. */
export function sameDatabaseEvents(storage: Storage): EventStore {
  return {
    db: storage.db,
    dataColumns: [],
    dataOf: (row) => storage.parseJson<Record<string, unknown>>(row.data),
    jsonText: storage.jsonText,
    jsonPathText: storage.jsonPathText,
    containsText: storage.containsText,
    percentilesByGroup: storage.percentilesByGroup,
    async append(trx, table, rows) {
      if (rows.length === 0) return
      const rowsPerStatement = Math.max(1, Math.floor(MAX_VALUES_PER_STATEMENT / Object.keys(rows[0]).length))
      for (let start = 0; start < rows.length; start += rowsPerStatement) {
        await tablesOf<EventTables>(trx).insertInto(table).values(rows.slice(start, start + rowsPerStatement)).execute()
      }
    },
  }
}
