import type { TObject, TProperties, TSchema, Static } from 'typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Expression, ExpressionBuilder, Kysely, SelectQueryBuilder, SqlBool } from 'kysely'
import type { PortalContext, WriteContext } from '../context.ts'
import type { Migration } from '../storage/migrations.ts'
import type { EventStore } from '../storage/event-store.ts'
import type { Database } from '../storage/tables.ts'
import { named, pascalCase } from '../http/openapi-components.ts'
import type { AlertSignal } from '../alerts/signal.ts'

/** An accepted event on its way into its module's table. */
export interface StoredEvent<D = Record<string, unknown>> {
  id: string
  projectId: string
  ts: number
  receivedAt: number
  data: D
}

/** The columns every module's event table has (`createEventTableV1`); a module's row type adds its indexed columns. */
export interface EventRow {
  id: string
  project_id: string
  ts: number
  received_at: number
  /** the payload: JSON text on SQLite, json on PostgreSQL; read it with `storage.parseJson`, or a columnar module's with `eventsOf(table).dataOf`, which adds back its promoted fields */
  data: unknown
}

/** A row of a group summary table (`createGroupSummaryTableV1`) over the group columns `C`. */
export type GroupSummaryRow<C extends string> = {
  project_id: string
  /** the group's column values as a JSON array (`groupKeyOf`) */
  group_key: string
  events: number
  first_ts: number
  last_ts: number
  last_event_id: string
} & { [column in C]: string | null }

/** A row of a group summary's hourly table (`createGroupHoursTableV1`) over the group columns `C`. */
export type GroupHoursRow<C extends string> = {
  project_id: string
  /** the UTC hour's first millisecond */
  hour: number
  group_key: string
  events: number
  first_ts: number
  last_ts: number
} & { [column in C]: string | null }

/**
 * Tables that generic code reaches by a name it is handed (a module's `table`, a summary's): their
 * columns by name. A module's own code uses its declared row types instead (`moduleDb<LogTables>`).
 */
export interface TablesByName {
  [table: string]: { [column: string]: unknown }
}

/** Modules' event tables, reached by a name generic code is handed (`module.table`): the common columns, and the module's own by name. */
export interface EventTablesByName {
  [table: string]: EventTableRow
}

/** A row of some module's event table: the common columns, and the module's own by name. */
export type EventTableRow = EventRow & { [column: string]: unknown }

/** The query of a module's `events` read that its filters narrow: one event table, its common columns selected. */
export type EventQuery = SelectQueryBuilder<TablesByName, string, EventRow>

/** What a filter's query parameter holds once its schema has checked it. */
export type FilterValue = string | number

/** A query parameter of a module's `events` read, and how it narrows the query. */
export interface EventFilter {
  schema: TSchema
  /** no index serves it (a text search): the read looks through a bounded window of events per page */
  scans?: boolean
  apply(query: EventQuery, value: FilterValue, storage: EventStore): EventQuery
}

/**
 * Query parameters of a module's `events` read whose names follow a pattern (`field.requestId`):
 * `pattern` is a regular expression over the name, and `apply` gets the part it captured. No index
 * can serve names chosen by the caller, so these always scan (see `EventFilter.scans`).
 */
export interface PatternFilter {
  pattern: string
  schema: TSchema
  apply(query: EventQuery, captured: string, value: FilterValue, storage: EventStore): EventQuery
}

/**
 * A table kept current as events are written: per project and group of `columns` (a flag key, a job),
 * the event count, first and latest time and latest event, so current-state reads need not scan events.
 * The first column names the group (a service, an author): events where it is null are not summarised.
 */
export interface GroupSummary {
  table: string
  columns: string[]
  /** a table of the same counts per project, group and UTC hour, for counts over a time window (`createGroupHoursTableV1`) */
  hours?: string
  /**
   * columns of each group's latest event kept beside it as `latest_<column>` (a job's latest status): reads filter
   * groups by them in the summary alone, which a columnar module's events, in another store, cannot be joined to
   */
  latest?: string[]
}

/**
 * A module's own examples of its payload: `data` it accepts, and `data` it refuses with the reason ingest
 * gives. Cross-module tests, the isolation seeds and the OpenAPI description take them from the registry.
 */
export interface PayloadExamples<P extends TObject> {
  valid: Static<P> & Record<string, unknown>
  invalid: { data: Record<string, unknown>; reason: string }
}

/** Rows beyond a module's event table that expire with its events (docs/retention.md). */
export interface ExpiringRows {
  table: string
  /** the epoch-milliseconds column compared with the cutoff */
  timeColumn: string
  /** the columns that identify one row */
  key: string[]
  /** rows that stay whatever their age (a delivery still being retried) */
  keep?(eb: ExpressionBuilder<TablesByName, string>): Expression<SqlBool>
}

export interface ModuleRetention {
  /** days kept when `RETENTION_DAYS_<TYPE>` is unset, instead of `RETENTION_DAYS`; a project's own `days` leaves it alone too */
  defaultDays?: number
  /** more tables whose rows expire with the module's events, purged in this order after them */
  expiring?: ExpiringRows[]
}

/** What one event of a module that yields change markers changed, as charts and the changes panel show it. */
export interface ChangeDescription {
  /** one line a person reads beside a chart: `api 1.5.0 deployed to production` */
  title: string
  /** what changed, as the module's own page finds it: a release, a configuration path, a flag key */
  subject: string
  service?: string | null
  environment?: string | null
  actor?: string | null
  commit?: string | null
}

/**
 * A module whose events are changes a person looks for beside a chart (deploys, configuration, flags):
 * `GET /api/changes` reads every module that declares this, so a new kind of change is one line in its module.
 */
export interface ChangeMarkers<D> {
  /** the marker's kind, shown and styled: deploy, config, flag */
  kind: string
  describe(data: D): ChangeDescription
}

/** A value written to an indexed column of the module's table, taken from the payload. */
export type ColumnValue = string | number | null

/**
 * One event type and everything that serves it. Adding a fourteenth type is one folder that exports
 * one of these, and one line in `registry.ts`; ingest, reads, OpenAPI and tests follow from the list.
 */
export interface EventModule<P extends TObject = TObject> {
  /** the `type` of the events it receives */
  type: string
  /** the module's name in status answers and documentation */
  name: string
  /** spec 4.5, without the trailing slash */
  basePath: string
  /** the shape of `data`: ingest validation, TypeScript types and OpenAPI come from this one schema */
  payload: P
  /** an event `data` it accepts and one it refuses, with the reason */
  examples: PayloadExamples<P>
  /** a rule across fields that a schema cannot say readably; returns the rejection reason */
  check?(data: Static<P>): string | undefined
  /** the module's table: id, project_id, ts, received_at, data, and the columns below */
  table: string
  /**
   * Every read of `table` goes through `ctx.storage.eventsOf(table)` and joins no other table, so its
   * rows may live in the columnar event store (DuckDB on the embedded default, docs/event-store.md).
   */
  columnar?: boolean
  /**
   * Payload fields that `columns` copies as they are into a column of the same name (`level: d.level ?? null`):
   * every store keeps such a field once, in its column, and `eventsOf(table).dataOf` gives `data` back whole
   * (src/storage/promoted-fields.ts). Only a `columnar` module declares them: its reads all go through `eventsOf`.
   */
  promotedFields?: string[]
  /**
   * Text columns whose values seldom repeat (a log's message): the columnar store compresses them with ZSTD, as it
   * does every table's `id`, where its default (FSST) took 40 % more bytes. A column of few distinct values (a
   * level, a service) is left out: its default dictionary is smaller.
   */
  freeTextColumns?: string[]
  migrations: Migration[]
  /** indexed columns filled from the payload (and the event, for defaults such as its month), by column name */
  columns(data: Static<P>, event: StoredEvent<Static<P>>): Record<string, ColumnValue>
  /** query parameters of `GET {basePath}/events` beyond the common ones, by snake_case name */
  filters: Record<string, EventFilter>
  /** query parameters of `GET {basePath}/events` named by a pattern */
  patternFilters?: PatternFilter[]
  /** group summaries its reads page through, updated with every insert */
  summaries?: Record<string, GroupSummary>
  /** work beyond the row insert, in the same transaction (a tenant's new limit, an error's group) */
  afterWrite?(trx: Kysely<Database>, events: StoredEvent<Static<P>>[], ctx: WriteContext): Promise<void>
  /** more fields for `GET {basePath}/status`: their schema, and how to read them (project_id given or not) */
  status?: {
    schema: TProperties
    read(ctx: PortalContext, projectId: string | undefined): Promise<Record<string, unknown>>
  }
  /** how its rows expire beyond the event table and the common default */
  retention?: ModuleRetention
  /** background work started once the server listens (a dispatcher); returns how to stop it */
  start?(ctx: PortalContext): Promise<() => Promise<void>>
  /** what alert rules can watch in this module (src/alerts/signal.ts), declared in its own `signals.ts` */
  signals?: AlertSignal[]
  /** its events are changes: markers on every time chart and the changes panel (`GET /api/changes`) */
  changes?: ChangeMarkers<Static<P>>
  /** the module's own reads, registered under its base path */
  routes?: FastifyPluginAsync<{ ctx: PortalContext; module: EventModule }>
}

/** A filter on equality with one column. */
export function columnEquals(column: string, schema: TSchema): EventFilter {
  ;(schema as { description?: string }).description ??= `only events whose \`${column}\` is this value`
  return { schema, apply: (query, value) => query.where(column, '=', value) }
}

export function defineModule<P extends TObject>(module: EventModule<P>): EventModule<P> {
  // A read that parses `data` itself (the summaries' latest events) would miss a field kept in its column.
  if (module.promotedFields?.length && !module.columnar) throw new Error(`module ${module.name} declares promotedFields, which needs columnar: true`)
  if (module.freeTextColumns?.length && !module.columnar) throw new Error(`module ${module.name} declares freeTextColumns, which needs columnar: true`)
  // The payload's component in the OpenAPI document shows the module's own accepted example.
  ;(module.payload as { examples?: unknown[] }).examples ??= [module.examples.valid]
  named(`${pascalCase(module.type)}Payload`, module.payload)
  return module
}
