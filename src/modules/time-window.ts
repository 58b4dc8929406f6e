import { Type } from 'typebox'
import type { SelectQueryBuilder } from 'kysely'
import { queryTime } from '../http/list.ts'
import { IsoTime } from './read-route.ts'

/** `from` and `to` of a read's time window (as `withinTimeRange` applies them), described as what they bound: changes, logs, values. */
export const TimeWindowQuery = (what: string) => ({ from: Type.Optional(IsoTime(`${what} at or after`)), to: Type.Optional(IsoTime(`${what} before`)) })

/** Narrows to events with `from` <= ts < `to` (ISO 8601, already checked by the schema). */
export function withinTimeRange<Q extends SelectQueryBuilder<any, any, any>>(query: Q, from: string | undefined, to: string | undefined, column = 'ts'): Q {
  let narrowed = query
  const fromMs = queryTime(from)
  const toMs = queryTime(to)
  if (fromMs !== undefined) narrowed = narrowed.where(column, '>=', fromMs) as Q
  if (toMs !== undefined) narrowed = narrowed.where(column, '<', toMs) as Q
  return narrowed
}

export function isoFromMs(epochMs: number | string): string {
  return new Date(Number(epochMs)).toISOString()
}
