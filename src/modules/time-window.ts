import { Type } from 'typebox'
import { sql, type SelectQueryBuilder } from 'kysely'
import { queryTime } from '../http/list.ts'
import { IsoTime } from './read-route.ts'

/** `from` and `to` of a read's time window (as `withinTimeRange` applies them), described as what they bound: changes, logs, values. */
export const TimeWindowQuery = (what: string) => ({ from: Type.Optional(IsoTime(`${what} at or after`)), to: Type.Optional(IsoTime(`${what} before`)) })

/** Narrows to events with `from` <= ts < `to` (ISO 8601, already checked by the schema). */
export function withinTimeRange<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, from: string | undefined, to: string | undefined, column = 'ts'): SelectQueryBuilder<DB, TB, O> {
  let narrowed = query
  const fromMs = queryTime(from)
  const toMs = queryTime(to)
  if (fromMs !== undefined) narrowed = narrowed.where(sql.ref(column), '>=', fromMs)
  if (toMs !== undefined) narrowed = narrowed.where(sql.ref(column), '<', toMs)
  return narrowed
}

export function isoFromMs(epochMs: number | string): string {
  return new Date(Number(epochMs)).toISOString()
}
