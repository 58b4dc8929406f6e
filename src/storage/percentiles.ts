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
 * is at least ⌈p·n/100⌉: for a whole rank, rank·100 ≥ p·n, with no division (DuckDB's `/` divides as floats).
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
      ...percentiles.map((p) => sql<number>`min(case when value_rank * 100 >= ${sql.lit(p)} * n then value end)`.as(`p${p}`)),
    ])
    .groupBy(names)
    .execute()
}

/**
 * Per group of `columns`, from how many times each value occurs: one query counts (group, value) pairs in
 * order, and each percentile is read at its rank from the running count. SQLite walks an index for it,
 * (project, ts, …, value) over a time window, (project, …, value) over all values, with no window
 * function and no query per group or rank, each of which walked the group's values up to its rank.
 */
export async function percentilesAtRanks(values: ValuesQuery, columns: string[], percentiles: readonly number[]): Promise<PercentileRow[]> {
  let counted = values.select((eb) => [...columns, 'value', eb.fn.countAll().as('occurrences')]).groupBy([...columns, 'value'])
  for (const column of [...columns, 'value']) counted = counted.orderBy(column)
  const rows: PercentileRow[] = []
  let group: Record<string, unknown>[] = []
  const fold = () => {
    if (group.length > 0) rows.push(groupStats(group, columns, percentiles))
    group = []
  }
  for (const row of (await counted.execute()) as Record<string, unknown>[]) {
    if (group.length > 0 && columns.some((column) => group[0][column] !== row[column])) fold()
    group.push(row)
  }
  fold()
  return rows
}

/** count, min, max, avg and percentiles of one group's (value, occurrences) rows, in value order. */
function groupStats(group: Record<string, unknown>[], columns: string[], percentiles: readonly number[]): PercentileRow {
  const count = group.reduce((sum, row) => sum + Number(row.occurrences), 0)
  const total = group.reduce((sum, row) => sum + Number(row.value) * Number(row.occurrences), 0)
  const atRanks = Object.fromEntries(percentiles.map((p) => [`p${p}`, valueAtRank(group, Math.floor((p * count + 99) / 100))]))
  const keys = Object.fromEntries(columns.map((column) => [column, group[0][column]]))
  return { ...keys, count, min: Number(group[0].value), max: Number(group[group.length - 1].value), avg: total / count, ...atRanks }
}

/** The value at a 1-based rank of the sorted values, from (value, occurrences) rows in value order. */
function valueAtRank(group: Record<string, unknown>[], rank: number): number {
  let seen = 0
  for (const row of group) {
    seen += Number(row.occurrences)
    if (seen >= rank) return Number(row.value)
  }
  return Number(group[group.length - 1].value)
}
