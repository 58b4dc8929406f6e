import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { Storage } from './storage.ts'
import type { Connection, Database } from './tables.ts'

/**
 * Where a module's event rows are written and read (docs/event-store.md): the same database as `db`
 * (PostgreSQL, SQLite without EVENT_STORE=duckdb), or DuckDB fed through a SQLite outbox. Its helpers
 * build expressions in the dialect of `db` here, which may differ from `Storage.db`'s. A table's promoted
 * fields are kept in their columns only (src/storage/promoted-fields.ts), so `data` is written through
 * `storedData` and read through `dataOf`, and `jsonText` and `jsonPathText` over `data` find them.
 */
export interface EventStore extends Pick<Storage, 'jsonText' | 'jsonPathText' | 'containsText' | 'percentilesByGroup'> {
  /** Reads of the event table; a read made after an ingest's 200 sees its events. */
  readonly db: Kysely<Database>
  /** Columns a read selects beside `data` for `dataOf`. */
  readonly dataColumns: readonly string[]
  /** The payload as ingested, from a row read with `data` and `dataColumns`. */
  dataOf(row: Record<string, unknown>): Record<string, unknown>
  /** What to store in `data` for `payload` (serialised as `payloadJson`) in a row whose other columns are `columns`. */
  storedData(payload: Record<string, unknown>, columns: Record<string, unknown>, payloadJson: string): string
  /** Writes one module's event rows inside the ingest transaction `trx` (of `Storage.db`): durable once it commits. */
  append(trx: Connection, table: string, rows: Record<string, unknown>[]): Promise<void>
  /** The `n`-th newest (by `ts`, then `id`) of the event rows `rows` selects from `db`; undefined when it selects fewer. */
  nthNewest(rows: EventRows, n: number): Promise<EventPosition | undefined>
}

/**
 * The outbox of a columnar event store (DuckDB on the embedded default, docs/event-store.md) and that store's
 * state: what health, `/metrics`, ingest's admission and a clean stop need to know.
 */
export interface EventOutbox {
  state(): OutboxState
  /**
   * Opens the store and applies what the outbox holds (a crash's leftovers at start); rejects with
   * StoreUnavailableError while it cannot, and keeps trying in the background.
   */
  ready(): Promise<void>
  /** Applies the whole outbox, rows committed meanwhile included, for up to `timeoutMs`; resolves to what is left. */
  drain(timeoutMs: number): Promise<OutboxState>
  /** Calls `listener` each time the store becomes unavailable or available again; returns the unsubscribe. */
  watch(listener: (state: OutboxState) => void): () => void
}

export interface OutboxState {
  /** events written to the outbox (acknowledged) and not yet applied to the event store, and the outbox rows holding them */
  backlogEvents: number
  backlogRows: number
  /** whether every row the outbox held at start has been applied: until then, reads may wait */
  started: boolean
  /** why events cannot be applied or read now (no space left on device, …); absent while they can */
  unavailable?: string
  /** since when (epoch ms) they cannot */
  unavailableSince?: number
  /** outages so far, and the times the store was reopened (after its engine invalidated it) */
  outages: number
  reopens: number
}

/** A query of event rows, filtered but not yet selected, ordered or limited. */
export type EventRows = SelectQueryBuilder<any, any, {}>

/** Where an event sits in newest-first order. */
export interface EventPosition {
  ts: number
  id: string
}

/** `nthNewest` where an offset walks an index on (project, ts, id): one index walk of `n` entries. */
export async function nthNewestByOffset(rows: EventRows, n: number): Promise<EventPosition | undefined> {
  const row = await rows.select(['ts', 'id']).orderBy('ts', 'desc').orderBy('id', 'desc').offset(n - 1).limit(1).executeTakeFirst()
  return row && { ts: Number(row.ts), id: String(row.id) }
}

/** The event store of a database that holds its event tables itself. */
export function sameDatabaseEvents(storage: Storage): EventStore {
  return {
    db: storage.db,
    dataColumns: [],
    dataOf: (row) => storage.parseJson<Record<string, unknown>>(row.data),
    storedData: (_payload, _columns, payloadJson) => payloadJson,
    jsonText: storage.jsonText,
    jsonPathText: storage.jsonPathText,
    containsText: storage.containsText,
    percentilesByGroup: storage.percentilesByGroup,
    append: (trx, table, rows) => storage.insertRows(trx, table, rows),
    nthNewest: nthNewestByOffset,
  }
}
