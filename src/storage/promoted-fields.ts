import { sql } from 'kysely'
import type { EventStore } from './event-store.ts'
import type { Storage } from './storage.ts'

/**
 * A module's promoted fields (`EventModule.promotedFields`: payload fields its columns copy as they are)
 * are kept once, in their columns, whichever store holds the table: `data` is stored without each one
 * whose column holds exactly the same value, and read back whole. Rows stored before this kept them in
 * `data` too, with the same values as their columns, so both kinds of row read and filter alike, with no
 * migration. `jsonText` and `jsonPathText` over `data` read a promoted field from its column; a text search
 * over the whole `data` (`containsText`) would not see it, and no read makes one. `promotedFields` maps an
 * event table to its module's fields.
 */
export function withPromotedFields(storage: Storage, promotedFields: Record<string, readonly string[]>): Storage {
  const stores = new Map(
    Object.entries(promotedFields)
      .filter(([, fields]) => fields.length > 0)
      .map(([table, fields]) => [table, promotedFieldsStore(storage.eventsOf(table), fields)]),
  )
  if (stores.size === 0) return storage
  return { ...storage, eventsOf: (table) => stores.get(table) ?? storage.eventsOf(table) }
}

/** `store`, which keeps `data` whole, keeping `fields` in their columns instead. */
function promotedFieldsStore(store: EventStore, fields: readonly string[]): EventStore {
  const keptInColumn = (payload: Record<string, unknown>, columns: Record<string, unknown>, field: string) =>
    fields.includes(field) && columns[field] !== null && columns[field] !== undefined && Object.hasOwn(payload, field) && payload[field] === columns[field]
  // `data` → `level`, `span.data` → `span.level`: a promoted field read from its column, which every row fills.
  const promotedColumn = (column: string, keys: readonly string[]) =>
    keys.length === 1 && fields.includes(keys[0]) && (column === 'data' || column.endsWith('.data')) ? column.slice(0, -'data'.length) + keys[0] : undefined
  const columnText = (column: string) => sql<string | null>`cast(${sql.ref(column)} as text)`
  return {
    ...store,
    dataColumns: [...store.dataColumns, ...fields],
    dataOf(row) {
      const data = store.dataOf(row)
      // A row stored before the fields were left out of `data` still holds them there.
      for (const field of fields) if (row[field] !== null && row[field] !== undefined && !Object.hasOwn(data, field)) data[field] = row[field]
      return data
    },
    storedData(payload, columns, payloadJson) {
      if (!fields.some((field) => keptInColumn(payload, columns, field))) return payloadJson
      // The payload object is at hand: serialising what is left costs less than parsing `payloadJson`.
      const rest: Record<string, unknown> = {}
      for (const key of Object.keys(payload)) if (!keptInColumn(payload, columns, key)) rest[key] = payload[key]
      return JSON.stringify(rest)
    },
    jsonText(column, key) {
      const promoted = promotedColumn(column, [key])
      return promoted === undefined ? store.jsonText(column, key) : columnText(promoted)
    },
    jsonPathText(column, keys) {
      const promoted = promotedColumn(column, keys)
      return promoted === undefined ? store.jsonPathText(column, keys) : columnText(promoted)
    },
  }
}
