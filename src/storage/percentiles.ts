import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import { tablesOf, type Connection } from './tables.ts'

/**
 * count, min, max and avg of `value`, and `p<N>` for each nearest-rank percentile asked for, beside
 * the group's own columns. The same figures whichever way a database computes them.
 */
export type PercentileRow = Record<string, unknown>

/** The values a percentile read ranks: a query over some module's table with a `value` column, grouped by columns the caller names. */
// any: the table is whichever module's, and its group columns are reached by the names given at run time
export type ValuesQuery = SelectQueryBuilder<any, any, any>

/** A group of values: its name in the result and the expression that computes it. */
export interface ValueGroup {
  name: string
  expression: RawBuilder<unknown>
}

/**
 * Per group, in one windowed pass that runs alike on both databases: each value is ranked within its
 * group (row_number over the sorted values), and the p-th percentile is the smallest value whose rank
 * is at least ⌈p·n/100⌉, written (p·n + 99) / 100 in integer division.
 */
export async function rankedPercentiles(
  values: ValuesQuery,
  groups: ValueGroup[],
  percentiles: readonly number[],
  db: Connection,
): Promise<PercentileRow[]> {
  const partition = sql.join(groups.map((group) => group.expression))
  const ranked = values.select([
    ...groups.map((group) => group.expression.as(group.name)),
    'value',
    sql<number>`row_number() over (partition by ${partition} order by value)`.as('value_rank'),
    sql<number>`count(*) over (partition by ${partition})`.as('n'),
  ])
  const names = groups.map((group) => group.name)
  return tablesOf(db)
    .selectFrom(ranked.as('ranked'))
    .select((eb) => [
      ...names,
      eb.fn.countAll().as('count'),
      eb.fn.min('value').as('min'),
      eb.fn.max('value').as('max'),
      eb.fn.avg('value').as('avg'),
      ...percentiles.map((p) => sql<number>`min(case when value_rank >= (${sql.lit(p)} * n + 99) / 100 then value end)`.as(`p${p}`)),
    ])
    .groupBy(names)
    .execute()
}

/**
 * Per group of `columns`, reading each percentile at its rank: one aggregate query, then per group
 * one query that walks an index on (columns…, value) in value order to each rank. Where window
 * functions are slow over many values but a query costs no round trip (SQLite), this is faster.
 */
export async function percentilesAtRanks(
  values: ValuesQuery,
  columns: string[],
  percentiles: readonly number[],
  db: Connection,
): Promise<PercentileRow[]> {
  const groups = await values
    .select((eb) => [...columns, eb.fn.countAll().as('count'), eb.fn.min('value').as('min'), eb.fn.max('value').as('max'), eb.fn.avg('value').as('avg')])
    .groupBy(columns)
    .execute()
  const rows: PercentileRow[] = []
  for (const group of groups) {
    const count = Number(group.count)
    const inGroup = columns.reduce((query, column) => query.where(column, group[column] === null ? 'is' : '=', group[column]), values)
    const ranked = await tablesOf(db)
      .selectNoFrom(percentiles.map((p) => inGroup.select('value').orderBy('value').limit(1).offset(Math.floor((p * count + 99) / 100) - 1).as(`p${p}`)))
      .executeTakeFirstOrThrow()
    rows.push({ ...group, ...ranked })
  }
  return rows
}
