import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { DuckDBInstance, listValue, type DuckDBConnection } from '@duckdb/node-api'
import { Kysely, sql, type Generated } from 'kysely'
import { percentilesAtRanks } from '../percentiles.ts'
import { StoreOutOfMemoryError, StoreUnavailableError, type SpaceManagement, type Storage } from '../storage.ts'
import { nthNewestByOffset, type EventOutbox, type EventPosition, type EventRows, type EventStore, type OutboxState } from '../event-store.ts'
import { tablesOf, type Connection, type Database } from '../tables.ts'
import type { Migration } from '../migrations.ts'
import { DuckdbDialect } from './duckdb-dialect.ts'
import { eventsFileBeside, tablesWithRows } from './events-file.ts'
import { describeDuckdbFailure, duckdbFailure, isLockConflict, isOutOfMemory } from './duckdb-failures.ts'

/** The materialiser applies the outbox this often under steady ingest, or sooner once this many events wait. */
const MATERIALISE_EVERY_MS = 250
const MATERIALISE_EVENTS = 16_000
/**
 * Outbox rows, and events, one DuckDB transaction applies at most. A row holds one ingest commit's events of a
 * module, up to 20,000: 256 rows of a backlog after full ingest were 400,000 events' JSON and DuckDB's copy of them
 * in memory at once. What DuckDB's allocator keeps resident follows the pass's size; 16,384 events is as small as
 * a pass gets before its own overhead costs CPU an event (the figures are in the commit that set it).
 */
const ROWS_PER_PASS = 256
const EVENTS_PER_PASS = 16_384
/**
 * Rows of a DuckDB row group (its default `row_group_size`). After a checkpoint, appends start a new row group, and
 * a later checkpoint merges neighbouring partial ones by writing them again: checkpointing every 16 MB of WAL (its
 * default) left a quarter of events.duckdb in free blocks. The materialiser checkpoints once a table has taken a row
 * group's rows since the last checkpoint, so that each partial row group is followed by a full one and none is
 * merged; DuckDB's own threshold, raised, only bounds the WAL of tables none of which fills one.
 */
const ROW_GROUP_ROWS = 122_880
const CHECKPOINT_WAL_BYTES = '128MB'
/** While DuckDB cannot apply the outbox (a full disk), how often it is tried again: a pass, or a reopen. */
const RETRY_EVERY_MS = 2_000
/** How long a close spends applying what is left when nobody drained the outbox before it (the portal does). */
const CLOSE_DRAIN_MS = 10_000
/** How long a close spends giving the outbox's freed pages back (4 MiB a few milliseconds). */
const CLOSE_VACUUM_MS = 2_000

const outboxMigration: Migration = {
  name: 'sqlite/002_event_outbox',
  async up(db) {
    // One row per module per ingest commit: its events as a columnar block (docs/event-store.md).
    // autoincrement: an emptied outbox must not hand out a seq that DuckDB's `upto` already covers.
    await sql`create table if not exists event_outbox (
      seq integer primary key autoincrement, event_table text not null, events integer not null, first_ts integer not null, last_ts integer not null, block blob not null
    )`.execute(db)
  },
}

/** The outbox's row, in the SQLite state database. */
interface OutboxTables {
  event_outbox: { seq: Generated<number>; event_table: string; events: number; first_ts: number; last_ts: number; block: string | Uint8Array }
}

/** A block: the rows' values column by column, as DuckDB's insert reads them (insertBlocks). */
interface Block {
  columns: string[]
  values: unknown[][]
}

/**
 * A block is stored as its JSON text. It stays in the outbox for a fraction of a second; deflating it (level 1) and
 * inflating it again cost 2.4 µs of CPU a log event, a tenth of ingest's, to save writing 3.4× the bytes once.
 */
function encodeBlock(rows: Record<string, unknown>[]): string {
  const columns = Object.keys(rows[0])
  const block: Block = { columns, values: columns.map((column) => rows.map((row) => row[column] ?? null)) }
  return JSON.stringify(block)
}

/** A block's JSON text, and the columns it names (its first member, which `encodeBlock` writes first). */
function decodeBlock(block: string | Uint8Array): { text: string; columns: string[] } {
  // a blob: deflated, as outboxes written before blocks were stored as text hold them
  const text = typeof block === 'string' ? block : zlib.inflateRawSync(block).toString('utf8')
  return { text, columns: (JSON.parse(text.slice(0, text.indexOf(']') + 1) + '}') as Pick<Block, 'columns'>).columns }
}

/** Writes `rows` of `table` to the outbox as one block, inside the ingest transaction `trx`. */
async function appendToOutbox(trx: Connection, table: string, rows: Record<string, unknown>[]) {
  if (rows.length === 0) return
  let first = Infinity
  let last = -Infinity
  for (const row of rows) {
    const ts = Number(row.ts)
    if (ts < first) first = ts
    if (ts > last) last = ts
  }
  await tablesOf<OutboxTables>(trx).insertInto('event_outbox').values({ event_table: table, events: rows.length, first_ts: first, last_ts: last, block: encodeBlock(rows) }).execute()
}

/**
 * The storage of the ingest writer's thread (src/ingest/ingest-writer-thread.ts) when `tables` live in
 * DuckDB: it writes their rows to the outbox in its ingest transactions and opens no DuckDB of its own
 * (one process holds the file); the event loop's thread (`withDuckdbEvents`) applies them and reads them.
 */
export function withDuckdbOutbox(storage: Storage, tables: readonly string[]): Storage {
  const held = new Set(tables)
  const unreadable = new Proxy({} as Kysely<Database>, {
    get() {
      throw new Error("DuckDB's event tables are read on the event loop's thread; a writer thread only appends to their outbox")
    },
  })
  return {
    ...storage,
    eventsOf(table) {
      const rowStore = storage.eventsOf(table)
      return held.has(table) ? { ...rowStore, db: unreadable, append: appendToOutbox } : rowStore
    },
  }
}

/** A JSON path for `json_extract_string`: `$."a"."b"`. */
function jsonPath(keys: string[]): string {
  return '$' + keys.map((key) => '."' + key.replace(/"/g, '') + '"').join('')
}

type ColumnType = 'VARCHAR' | 'BIGINT' | 'DOUBLE'

/**
 * SQLite with the event rows of `columnarTables` in DuckDB (events.duckdb beside `file`): ingest writes them
 * to the SQLite `event_outbox` in its own transaction (the 200 waits for that commit's fsync); the
 * materialiser appends outbox rows to DuckDB and records the last applied `seq` in the same DuckDB
 * transaction, then deletes them from the outbox; a read first has every committed outbox row applied.
 *
 * Unless `every` (EVENT_STORE=duckdb), a table whose rows SQLite holds and DuckDB does not, from before
 * it was columnar, keeps them there, read and written where they are rather than hidden after an upgrade;
 * once retention has emptied it, the next start moves it (docs/event-store.md). A table DuckDB holds stays.
 */
export async function withDuckdbEvents(storage: Storage, file: string, columnarTables: readonly string[], every: boolean, freeTextColumns: Record<string, readonly string[]>): Promise<Storage> {
  const duckdbFile = eventsFileBeside(file)
  const withRows = every ? [] : await tablesWithRows(storage, columnarTables)
  // A folder of rows only, from before DuckDB: no events.duckdb is made for it.
  if (withRows.length === columnarTables.length && !fs.existsSync(duckdbFile)) return storage
  // DuckDB's lock on the file is the process's (POSIX locks are): it refuses another process, not a second
  // portal of this one, whose own instance and materialiser would write the same file beside the first's.
  if (openHere.has(duckdbFile)) throw new Error(`${duckdbFile} is open by another portal in this process; one portal holds a data folder's DuckDB event store`)
  const state = tablesOf<OutboxTables>(storage.db)
  const schemas = new Map<string, { name: string; type: ColumnType }[]>()
  /** The open database: the materialiser's connection (its transactions), and the one reads run on, which see what it has committed. */
  let opened: { instance: DuckDBInstance; connection: DuckDBConnection; readConnection: DuckDBConnection } | undefined
  let tables: readonly string[]
  /** Why events cannot be applied or read now, and when the next try is due. */
  let outage: { reason: string; since: number; retryAt: number } | undefined
  let outages = 0
  let reopens = 0
  let backlog = { events: 0, rows: 0 }
  const listeners = new Set<(state: OutboxState) => void>()
  let started: Promise<void> | null = null
  /** whether the open database's start (the outbox it found applied) has finished */
  let startedOk = false
  // The pass (or backup) that holds the materialiser's connection; every caller meanwhile shares it.
  let running: Promise<number> | null = null
  let reopening: Promise<void> | null = null
  let closing: Promise<void> = Promise.resolve()
  let appliedUpto = 0
  let pendingEvents = 0
  /** whether the last pass left committed rows for the next (it stopped at ROWS_PER_PASS or EVENTS_PER_PASS) */
  let lastPassFull = false
  /** whether the open file's format compresses text with ZSTD, read at its start */
  let zstdText = false
  /** Rows applied to each table since the last checkpoint (ROW_GROUP_ROWS). */
  const sinceCheckpoint = new Map<string, number>()
  let closed = false

  async function openFile() {
    // No late materialisation (DuckDB's default for a LIMIT of at most 50): the newest 50 logs of one module at one
    // level, of 1M, took 8.8 ms with it and 6.9 without; its second pass over the wide columns costs more than it saves.
    // A new file takes DuckDB 1.2's storage format, the first to compress text with ZSTD (see `compressesTextWithZstd`).
    const instance = await DuckDBInstance.create(duckdbFile, { threads: '1', late_materialization_max_rows: '0', checkpoint_threshold: CHECKPOINT_WAL_BYTES, storage_compatibility_version: 'v1.2.0' })
    try {
      return { instance, connection: await instance.connect(), readConnection: await instance.connect() }
    } catch (error) {
      instance.closeSync()
      throw error
    }
  }

  openHere.add(duckdbFile)
  try {
    opened = await openFile()
    const inDuckdb = new Set((await opened.connection.runAndReadAll('select table_name from duckdb_tables()')).getRows().map(([name]) => String(name)))
    tables = columnarTables.filter((table) => inDuckdb.has(table) || !withRows.includes(table))
  } catch (error) {
    // A file DuckDB cannot open now (a full disk at start) is waited out, reopened in the background, when every
    // table is DuckDB's anyway; which tables it holds of a folder with rows in SQLite too cannot be known without it.
    if (opened || isLockConflict(error) || !duckdbFailure(error) || withRows.length > 0) {
      opened?.instance.closeSync()
      openHere.delete(duckdbFile)
      throw error
    }
    tables = columnarTables
    beginOutage(describeDuckdbFailure(error))
  }

  function stateOf(): OutboxState {
    return { backlogEvents: backlog.events, backlogRows: backlog.rows, started: startedOk, unavailable: outage?.reason, unavailableSince: outage?.since, outages, reopens }
  }

  function notify() {
    for (const listener of listeners) listener(stateOf())
  }

  function beginOutage(reason: string) {
    const now = Date.now()
    if (!outage) outages++
    const changed = outage?.reason !== reason
    outage = { reason, since: outage?.since ?? now, retryAt: now + RETRY_EVERY_MS }
    if (changed) notify()
  }

  function endOutage() {
    if (!outage) return
    outage = undefined
    notify()
  }

  /** The materialiser's connection, or StoreUnavailableError while the database is not open. */
  function connectionNow(): DuckDBConnection {
    if (!opened) throw new StoreUnavailableError(outage?.reason ?? 'the DuckDB event store is closed')
    return opened.connection
  }

  /**
   * What a DuckDB call that failed throws: an outage (recorded for health, retried) as StoreUnavailableError, which
   * is a 503; a database DuckDB has invalidated is also closed, and reopened by the timer; a query refused memory as
   * StoreOutOfMemoryError (a 503 too); anything else as it is (a bug).
   */
  function failed(error: unknown): unknown {
    if (error instanceof StoreUnavailableError) return error
    if (isOutOfMemory(error)) return new StoreOutOfMemoryError(`DuckDB could not get the memory the query needs: ${describeDuckdbFailure(error).split('\n')[0]}`)
    const failure = duckdbFailure(error)
    if (!failure) return error
    const reason = describeDuckdbFailure(error)
    beginOutage(reason)
    if (failure === 'invalidated' && opened) {
      const old = opened
      opened = undefined
      started = null
      startedOk = false
      closing = closeOpened(old)
    }
    return new StoreUnavailableError(reason)
  }

  /** Closes an invalidated database once the pass and the read running on it have ended (they fail at once). */
  async function closeOpened(old: NonNullable<typeof opened>) {
    while (running) await running.catch(() => {})
    await dialect.idle()
    for (const close of [() => old.readConnection.closeSync(), () => old.connection.closeSync(), () => old.instance.closeSync()]) {
      try {
        close()
      } catch {
        // an invalidated database may refuse its own close; the handle is let go either way
      }
    }
  }

  /** Opens the file again after DuckDB invalidated it (or could not open it at start); its start applies what waits. */
  async function reopen() {
    await closing
    try {
      opened = await openFile()
    } catch (error) {
      beginOutage(describeDuckdbFailure(error))
      return
    }
    reopens++
    await pass(true).catch(() => {})
  }

  // The DuckDB tables take the SQLite tables' columns once migrations have made them; no index:
  // DuckDB's row groups keep min/max per column, and the rows arrive in time order.
  async function start() {
    const connection = connectionNow()
    zstdText = await compressesTextWithZstd(connection)
    const existing = new Set((await connection.runAndReadAll('select table_name, column_name from duckdb_columns()')).getRows().map(([table, column]) => `${table}.${column}`))
    for (const table of tables) await syncTable(table, existing)
    await connection.run('create table if not exists outbox_applied (upto bigint not null)')
    const upto = (await connection.runAndReadAll('select max(upto) from outbox_applied')).getRows()[0][0]
    if (upto === null) await connection.run('insert into outbox_applied values (0)')
    appliedUpto = Number(upto ?? 0)
    // Rows a crash left between the DuckDB commit and the delete: applied already, so only deleted.
    await state.deleteFrom('event_outbox').where('seq', '<=', appliedUpto).execute()
    while ((await applyPass()) > 0 && lastPassFull);
    startedOk = true
  }

  /**
   * Gives DuckDB's `table` every column SQLite's has: at the first start, and for a migration that added one since
   * (a start that ran while the migrations did, or an upgrade), whose rows would otherwise fail every insert.
   */
  async function syncTable(table: string, existing?: Set<string>) {
    const connection = connectionNow()
    const { rows } = await sql<{ name: string; type: string }>`select name, type from pragma_table_info(${table})`.execute(state)
    if (rows.length === 0) throw new Error(`${table} is not made yet: its migrations have not run`)
    const columns = rows.map((row) => ({ name: row.name, type: duckdbType(row.type) }))
    const zstd = new Set(zstdText ? [...ZSTD_COLUMNS, ...(freeTextColumns[table] ?? [])] : [])
    const definition = (c: (typeof columns)[number]) => `${quote(c.name)} ${c.type}${c.type === 'VARCHAR' && zstd.has(c.name) ? ' using compression zstd' : ''}`
    await connection.run(`create table if not exists ${quote(table)} (${columns.map(definition).join(', ')})`)
    for (const column of columns) {
      if (!existing?.has(`${table}.${column.name}`)) await connection.run(`alter table ${quote(table)} add column if not exists ${quote(column.name)} ${column.type}`)
    }
    schemas.set(table, columns)
  }

  // Not kept when it fails: with the writer thread the timer looks from the start, before migrations
  // may have made the tables, and a later look starts it then.
  const ready = () =>
    (started ??= start().catch((error: unknown) => {
      started = null
      throw failed(error)
    }))

  /**
   * Applies the committed outbox rows that come next, up to ROWS_PER_PASS rows or EVENTS_PER_PASS events (one row at
   * least), in one DuckDB transaction; returns how many, and sets `lastPassFull` when it left some for the next pass.
   */
  async function applyPass(): Promise<number> {
    const connection = connectionNow()
    // Through Kysely, which queues behind an open ingest transaction: rows it has not committed are not seen.
    const waiting = await state.selectFrom('event_outbox').select(['seq', 'events']).where('seq', '>', appliedUpto).orderBy('seq').limit(ROWS_PER_PASS).execute()
    if (waiting.length === 0) {
      lastPassFull = false
      return 0
    }
    let taken = 1
    for (let events = Number(waiting[0].events); taken < waiting.length && events + Number(waiting[taken].events) <= EVENTS_PER_PASS; taken++) events += Number(waiting[taken].events)
    lastPassFull = taken < waiting.length || waiting.length === ROWS_PER_PASS
    const rows = (await state
      .selectFrom('event_outbox')
      .select(['seq', 'event_table', 'events', 'block'])
      .where('seq', '>', appliedUpto)
      .where('seq', '<=', waiting[taken - 1].seq)
      .orderBy('seq')
      .execute()) as { seq: number; event_table: string; events: number; block: string | Uint8Array }[]
    const upto = rows[rows.length - 1].seq
    // One statement per table and column list: each await waits for a turn of a busy event loop.
    const inserts = new Map<string, { table: string; columns: string[]; texts: string[] }>()
    for (const row of rows) {
      const block = decodeBlock(row.block)
      const key = JSON.stringify([row.event_table, block.columns])
      const insert = inserts.get(key) ?? inserts.set(key, { table: row.event_table, columns: block.columns, texts: [] }).get(key)!
      insert.texts.push(block.text)
    }
    for (const { table, columns } of inserts.values()) {
      const schema = schemas.get(table)
      if (!schema) throw new Error(`the outbox holds events of ${table}, which the DuckDB event store does not hold`)
      // Rows written after a migration added a column this start has not seen.
      if (columns.some((column) => !schema.some((known) => known.name === column))) await syncTable(table)
    }
    await connection.run('begin transaction')
    try {
      for (const { table, columns, texts } of inserts.values()) await connection.run(insertBlocks(table, schemas.get(table)!, columns), [listValue(texts)])
      await connection.run(`update outbox_applied set upto = ${upto}`)
      if (process.env.PORTAL_TEST_CRASH_IN_MATERIALISER === 'before-duckdb-commit') process.kill(process.pid, 'SIGKILL')
      await connection.run('commit')
    } catch (error) {
      // A commit that failed (a full disk) has ended the transaction already: its error is the one to tell. A commit
      // that is durable but whose checkpoint failed invalidates the database: the start after the reopen finds `upto`.
      await connection.run('rollback').catch(() => {})
      throw error
    }
    appliedUpto = upto
    if (process.env.PORTAL_TEST_CRASH_IN_MATERIALISER === 'after-duckdb-commit') process.kill(process.pid, 'SIGKILL')
    // Need not be synced: after a crash, `outbox_applied.upto` says these rows are applied.
    await state.deleteFrom('event_outbox').where('seq', '<=', upto).execute()
    let fullRowGroup = false
    for (const row of rows) {
      const count = (sinceCheckpoint.get(row.event_table) ?? 0) + Number(row.events)
      sinceCheckpoint.set(row.event_table, count)
      fullRowGroup ||= count >= ROW_GROUP_ROWS
    }
    if (fullRowGroup) await checkpoint()
    return rows.length
  }

  async function checkpoint() {
    // FORCE: a plain checkpoint fails while a read's transaction runs; this one waits for it (DuckDB 1.4 and later).
    await connectionNow().run('force checkpoint')
    sinceCheckpoint.clear()
  }

  /**
   * One materialiser pass, or the one running, which the caller shares; resolves to the rows it applied (-1: a
   * backup's turn). During an outage it fails at once until the next try is due (`force`: a stop's, try now),
   * so that reads arriving meanwhile answer 503 without each retrying the writes that failed.
   */
  function pass(force = false): Promise<number> {
    if (running) return running
    if (outage && !force && Date.now() < outage.retryAt) return Promise.reject(new StoreUnavailableError(outage.reason))
    running = ready()
      .then(applyPass)
      .then(
        (applied) => {
          if (opened) endOutage()
          return applied
        },
        (error: unknown) => {
          throw failed(error)
        },
      )
      .finally(() => (running = null))
    return running
  }

  /** Applies the whole outbox, rows committed meanwhile included: the background timer's. */
  async function applyAll(): Promise<void> {
    pendingEvents = 0
    while ((await pass()) > 0 && lastPassFull);
  }

  /** The newest committed outbox row's `seq` (of `tables` only, when given). */
  async function newestSeq(tables?: string[]): Promise<number> {
    let newest = state.selectFrom('event_outbox').select((eb) => eb.fn.max('seq').as('seq'))
    if (tables) newest = newest.where('event_table', 'in', tables.length > 0 ? tables : [''])
    return Number((await newest.executeTakeFirst())?.seq ?? 0)
  }

  /** A stop's: every outbox row applied, or `timeoutMs` spent trying (through an outage too); what is left. */
  async function drain(timeoutMs: number): Promise<OutboxState> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      try {
        if (appliedUpto >= (await newestSeq()) && startedOk) break
        if (!opened) await (reopening ??= reopen().finally(() => (reopening = null)))
        else await pass(true)
      } catch {
        await new Promise((resolve) => setTimeout(resolve, Math.min(MATERIALISE_EVERY_MS, Math.max(0, deadline - Date.now()))))
      }
    }
    await countBacklog()
    return stateOf()
  }

  let counting = false
  /** Counts what the outbox holds beyond `upto`: for health, `/metrics` and ingest's bound (EVENT_OUTBOX_MAX_EVENTS). */
  async function countBacklog() {
    if (counting) return
    counting = true
    try {
      const row = await state
        .selectFrom('event_outbox')
        .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.coalesce(eb.fn.sum<number>('events'), eb.lit(0)).as('events')])
        .where('seq', '>', appliedUpto)
        .executeTakeFirst()
      backlog = { events: Number(row?.events ?? 0), rows: Number(row?.rows ?? 0) }
    } catch {
      // the state database cannot be read now either: the last count stands, and its own check says why
    } finally {
      counting = false
    }
  }

  /**
   * The read barrier: applies every outbox row of `tables` (all, without them) committed before this call, and no
   * more. Under steady ingest the outbox never empties, so a barrier that waited for it to (as it once did) kept
   * reads waiting for rows committed after them, pass after pass; and a read of one table need not wait for
   * another's rows, which a full disk may keep from being applied.
   */
  async function materialise(tables: string[] | undefined): Promise<void> {
    await ready()
    const target = await newestSeq(tables)
    // A pass that finds nothing left to apply ends the wait too (a backup's turn answers -1, and is waited out).
    while (appliedUpto < target && (await pass()) !== 0);
  }

  // The writer thread's appends (withDuckdbOutbox) are not counted here: with it, every tick looks. While an outage
  // lasts, a try every RETRY_EVERY_MS: a pass, or a reopen of the database DuckDB invalidated.
  const timer = setInterval(() => {
    void countBacklog()
    if (closed || running || reopening) return
    if (!opened) {
      if (Date.now() >= (outage?.retryAt ?? 0)) reopening = reopen().finally(() => (reopening = null))
      return
    }
    if (outage ? Date.now() >= outage.retryAt : pendingEvents > 0 || storage.writerLock) applyAll().catch(() => {})
  }, MATERIALISE_EVERY_MS)
  timer.unref()

  const dialect = new DuckdbDialect({
    connection() {
      if (!opened) throw new StoreUnavailableError(outage?.reason ?? 'the DuckDB event store is closed')
      return opened.readConnection
    },
    beforeQuery: (tables) => (closed ? Promise.resolve() : materialise(tables)),
    failed,
  })
  const db = new Kysely<Database>({ dialect })

  async function append(trx: Connection, table: string, rows: Record<string, unknown>[]) {
    if (rows.length === 0) return
    await appendToOutbox(trx, table, rows)
    pendingEvents += rows.length
    if (pendingEvents >= MATERIALISE_EVENTS && !outage) setImmediate(() => applyAll().catch(() => {}))
  }

  const events: EventStore = {
    db,
    dataColumns: [],
    dataOf: (row) => JSON.parse(row.data as string) as Record<string, unknown>,
    storedData: (_payload, _columns, payloadJson) => payloadJson,
    jsonText: (column, key) => sql<string | null>`json_extract_string(${sql.ref(column)}, ${jsonPath([key])})`,
    jsonPathText: (column, keys) => sql<string | null>`json_extract_string(${sql.ref(column)}, ${jsonPath(keys)})`,
    // not ILIKE: with an ESCAPE clause DuckDB matches it 2.5–3× slower than this (10M messages: 903 vs 306 ms)
    containsText: (column, needle) => sql<boolean>`contains(lower(${sql.ref(column)}), lower(${needle}))`,
    percentilesByGroup: (values, columns, percentiles) => percentilesAtRanks(values, columns, percentiles),
    append,
    nthNewest,
  }
  const held = new Set(tables)

  const space: SpaceManagement = {
    ...storage.space,
    // Deleted rows' row groups go back to DuckDB's free list at a checkpoint, and the file is truncated past its last
    // used block: it shrinks when the newest blocks were freed, and new rows reuse the rest. Between passes: on the
    // materialiser's connection, inside a pass's transaction, a checkpoint fails and aborts that transaction.
    async returnFreeSpace(stop) {
      if (startedOk && !closed) await exclusively(checkpoint).catch((error: unknown) => {
        throw failed(error)
      })
      return storage.space.returnFreeSpace(stop)
    },
    // DuckDB does not size a table by itself: its file (and WAL) is shared out among the tables it holds, in
    // proportion to the rows each has (an estimate: rows differ in width, but 10M logs beside 100,000 of each
    // other type get the file's 97 %, not the quarter an even share gave them).
    async tableSizes(names) {
      const sizes = await storage.space.tableSizes(names.filter((name) => !held.has(name)))
      const ours = names.filter((name) => held.has(name))
      if (ours.length > 0) {
        const bytes = fileSize(duckdbFile) + fileSize(`${duckdbFile}.wal`)
        const { rows } = await sql<{ table_name: string; rows: number }>`select table_name, estimated_size as rows from duckdb_tables()`.execute(db)
        const rowsOf = new Map(rows.filter((row) => held.has(row.table_name)).map((row) => [row.table_name, Number(row.rows)]))
        const total = [...rowsOf.values()].reduce((sum, count) => sum + count, 0)
        for (const name of ours) sizes[name] = Math.round(total === 0 ? bytes / held.size : (bytes * (rowsOf.get(name) ?? 0)) / total)
      }
      return sizes
    },
  }

  /**
   * Runs `work` while no materialiser pass runs and none starts; passes and reads asked for meanwhile wait
   * for it. A backup copies SQLite and then DuckDB under it, so `outbox_applied.upto` in the copy never runs
   * past the outbox's sequence in the copy (a restored portal would take the next rows' `seq` as applied).
   */
  async function exclusively<T>(work: () => Promise<T>): Promise<T> {
    await ready()
    while (running) await running.catch(() => {})
    const run = work()
    running = run.then(() => -1, () => -1).finally(() => (running = null))
    return run
  }

  /** The state database's copy, then DuckDB's, with no materialiser pass between the two (see `exclusively`). */
  function backup(destination: string): Promise<string[]> {
    return exclusively(async () => {
      const written = (await storage.backup?.(destination)) ?? []
      const target = path.join(destination, path.basename(duckdbFile))
      written.push(target)
      const connection = connectionNow()
      try {
        const databaseName = String((await connection.runAndReadAll('select current_database()')).getRows()[0][0])
        await connection.run(`attach ${literal(target)} as backup_copy`)
        try {
          await connection.run(`copy from database ${quote(databaseName)} to backup_copy`)
        } finally {
          // Detaching checkpoints the copy: one file, no WAL beside it.
          await connection.run('detach backup_copy')
        }
      } catch (error) {
        throw failed(error)
      }
      return written
    })
  }

  const eventOutbox: EventOutbox = {
    state: stateOf,
    ready: async () => {
      await ready()
      await countBacklog()
    },
    drain,
    watch(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }

  return {
    ...storage,
    // DuckDB's outages (a full disk, a file it may not write, a database it invalidated) keep the outbox from being
    // applied and its tables from being read: StoreUnavailableError, as `failed` makes them.
    isUnavailable: (error) => storage.isUnavailable(error) || error instanceof StoreUnavailableError,
    space,
    backup,
    eventsOf: (table) => (held.has(table) ? events : storage.eventsOf(table)),
    columnarTables: tables,
    eventOutbox,
    layoutMigrations: [...storage.layoutMigrations, outboxMigration],
    async close() {
      clearInterval(timer)
      // What a stop left unapplied (the portal drains first, within SHUTDOWN_TIMEOUT_SECONDS) the next start applies.
      if (startedOk && !outage) {
        await drain(CLOSE_DRAIN_MS)
        // The emptied outbox's pages go back to the file system: a stop leaves the state database its own size,
        // not the size of the largest backlog since the last retention run.
        const until = Date.now() + CLOSE_VACUUM_MS
        // (Not giving them back loses nothing: the next outbox reuses them.)
        await storage.space.returnFreeSpace(() => Date.now() > until).catch(() => {})
      }
      closed = true
      while (reopening) await reopening
      await closing
      // A backup may still hold the materialiser's connection, which closeSync must not pull from under it.
      while (running) await running.catch(() => {})
      await db.destroy()
      if (opened) {
        opened.readConnection.closeSync()
        opened.connection.closeSync()
        opened.instance.closeSync()
        opened = undefined
      }
      openHere.delete(duckdbFile)
      await storage.close()
    },
  }
}

/** The DuckDB files this process's portals hold. */
const openHere = new Set<string>()

/** The spans back from the newest row that `nthNewest` counts, five a query: 1 min × 4^i, the last one unbounded. */
const SPAN_BATCHES = [0, 5, 10].map((first) => Array.from({ length: 5 }, (_, i) => (first + i === 14 ? Infinity : 60_000 * 4 ** (first + i))))

/**
 * DuckDB sorts every matching row for an offset past its top-N bound (5,000 rows, or 0.7 % of its
 * estimate of the matching rows): 3.1 s for the 20,000th newest of 10M logs. A time bound it prunes by
 * row-group min/max instead, the rows arriving in time order. So this counts the rows within spans
 * 4× wider each time back from the newest row (five spans a query, the widest bounding its scan),
 * and sorts only the rows of the narrowest span that holds `n`.
 */
async function nthNewest(rows: EventRows, n: number): Promise<EventPosition | undefined> {
  const newest = await rows.select('ts').orderBy('ts', 'desc').limit(1).executeTakeFirst()
  if (!newest) return undefined
  const within = (query: EventRows, span: number) => (span === Infinity ? query : query.where('ts', '>=', Number(newest.ts) - span))
  for (const spans of SPAN_BATCHES) {
    const counts = await within(rows, spans[spans.length - 1])
      .select((eb) => spans.map((span, i) => (span === Infinity ? eb.fn.countAll() : eb.fn.countAll().filterWhere('ts', '>=', Number(newest.ts) - span)).as(`within${i}`)))
      .executeTakeFirstOrThrow()
    const holding = spans.findIndex((_, i) => Number(counts[`within${i}`]) >= n)
    if (holding >= 0) return nthNewestByOffset(within(rows, spans[holding]), n)
  }
  return undefined
}

/**
 * The insert of blocks' rows, given as a list of their JSON texts (the one parameter), each naming the
 * columns `blockColumns` in that order. DuckDB parses them and casts each column's values on its own thread,
 * where an appender would make one call per value on the event loop's: 1.7 µs of CPU a log event in all,
 * 0.3 of it on the event loop, against the appender's 3.1–3.7 nearly all on it (docs/event-store.md). A table column the blocks do not name is
 * left null; a VARCHAR column's non-string values keep their JSON text.
 */
function insertBlocks(table: string, columns: { name: string; type: ColumnType }[], blockColumns: string[]): string {
  const present = columns.filter((column) => blockColumns.includes(column.name))
  // Each block parsed once into its columns' JSON (a `->` per column would parse the whole block each time).
  const lists = present.map((column, i) => `block[${blockColumns.indexOf(column.name) + 1}]::${column.type}[] as v${i}`)
  return `insert into ${quote(table)} (${present.map((column) => quote(column.name)).join(', ')})
    select ${present.map((_, i) => `unnest(v${i})`).join(', ')}
    from (select ${lists.join(', ')} from (select json_transform(unnest($1::VARCHAR[]), '{"values":["JSON"]}').values as block))`
}

/**
 * Every event table's text column of unique values, beside its module's `freeTextColumns`. Not `data`: ZSTD saved
 * 1.3 B/event of it, and filters on its fields parse it whole, row after row.
 */
const ZSTD_COLUMNS = ['id']

/**
 * Whether the open file's storage format compresses text with ZSTD (1.2 and later), for a new table's ZSTD_COLUMNS
 * and `freeTextColumns`. At 1,000,000 realistic logs (ids and messages) ZSTD took 60.0 B/event against FSST's 72.1,
 * and a text search over 24 hours as long. A file made before keeps its format: there ZSTD is accepted and the text
 * stored uncompressed.
 */
async function compressesTextWithZstd(connection: DuckDBConnection): Promise<boolean> {
  const version = String((await connection.runAndReadAll(`select tags['storage_version'] from duckdb_databases() where database_name = current_database()`)).getRows()[0]?.[0] ?? '')
  const [major, minor] = (/^v(\d+)\.(\d+)\./.exec(version) ?? []).slice(1).map(Number)
  return major > 1 || (major === 1 && minor >= 2)
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size
  } catch {
    return 0
  }
}

function duckdbType(sqliteType: string): ColumnType {
  const type = sqliteType.toLowerCase()
  if (type.includes('int')) return 'BIGINT'
  if (type.includes('real') || type.includes('double') || type.includes('float')) return 'DOUBLE'
  return 'VARCHAR'
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`
