import { Type } from 'typebox'
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import type { PortalContext } from '../../context.ts'
import type { Storage } from '../../storage/storage.ts'
import { queryTime } from '../../http/list.ts'
import { badQuery, IsoTime, Nullable, ProjectQuery, isoFromMs, moduleDb, moduleReads, readRoute, requireReadableProject, withinTimeRange, TimeWindowQuery } from '../module-reads.ts'

const PERCENTILES = [50, 95, 99] as const

const Stats = {
  count: Type.Integer(),
  min: Type.Number(),
  max: Type.Number(),
  avg: Type.Number({ description: 'rounded to 6 decimal places' }),
  p50: Type.Number({ description: 'nearest rank: the value at rank ⌈0.50·count⌉ of the sorted values' }),
  p95: Type.Number({ description: 'nearest rank: the value at rank ⌈0.95·count⌉' }),
  p99: Type.Number({ description: 'nearest rank: the value at rank ⌈0.99·count⌉' }),
}

const Summary = Type.Object({
  data: Type.Array(Type.Object({ service: Nullable(Type.String()), metric: Type.String(), unit: Nullable(Type.String()), ...Stats })),
})

const BUCKETS = { '1m': 60_000, '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '6h': 21_600_000, '1d': 86_400_000 } as const
type BucketName = keyof typeof BUCKETS
const MAX_BUCKETS = 1000
const AUTO_BUCKETS = 200
const DAY_MS = 86_400_000

const Series = Type.Object({
  metric: Type.String(),
  service: Nullable(Type.String()),
  bucket: Type.String({ description: 'the bucket width used' }),
  from: IsoTime(),
  to: IsoTime(),
  data: Type.Array(Type.Object({ start: IsoTime('bucket start (UTC, aligned to the epoch)'), ...Stats }), { description: 'oldest first; buckets without values are left out' }),
})

const FilterQuery = {
  ...ProjectQuery,
  ...TimeWindowQuery('values'),
  service: Type.Optional(Type.String({ description: 'only values of this service' })),
}

/**
 * count/min/max/avg and nearest-rank percentiles per group, in SQL that runs alike on both databases:
 * each value is ranked within its group (row_number over the sorted values), and the p-th percentile is
 * the smallest value whose rank is at least ⌈p·n/100⌉, written (p·n + 99) / 100 in integer division.
 */
async function groupStats(db: Kysely<any>, events: SelectQueryBuilder<any, any, any>, groups: { name: string; expression: RawBuilder<unknown> }[]) {
  const partition = sql.join(groups.map((group) => group.expression))
  const ranked = events.select([
    ...groups.map((group) => group.expression.as(group.name)),
    'value',
    sql<number>`row_number() over (partition by ${partition} order by value)`.as('value_rank'),
    sql<number>`count(*) over (partition by ${partition})`.as('n'),
  ])
  const names = groups.map((group) => group.name)
  const rows = await db
    .selectFrom(ranked.as('ranked'))
    .select((eb) => [
      ...names,
      eb.fn.countAll().as('count'),
      eb.fn.min('value').as('min'),
      eb.fn.max('value').as('max'),
      eb.fn.avg('value').as('avg'),
      ...PERCENTILES.map((p) => sql<number>`min(case when value_rank >= (${sql.lit(p)} * n + 99) / 100 then value end)`.as(`p${p}`)),
    ])
    .groupBy(names)
    .execute()
  return rows.map((row) => ({ row, stats: statsOf(row, row) }))
}

/** The figures of one group, from its aggregate row and the row holding its percentiles. */
function statsOf(aggregates: Record<string, unknown>, percentiles: Record<string, unknown>) {
  return {
    count: Number(aggregates.count),
    min: Number(aggregates.min),
    max: Number(aggregates.max),
    avg: Math.round(Number(aggregates.avg) * 1e6) / 1e6,
    p50: Number(percentiles.p50),
    p95: Number(percentiles.p95),
    p99: Number(percentiles.p99),
  }
}

type SeriesStats = { service: string | null; metric: string; unit: string | null } & Record<'count' | 'min' | 'max' | 'avg' | 'p50' | 'p95' | 'p99', number>

/**
 * The summary's statistics per (service, metric, unit), the same figures either way, by the way each
 * database answers a month of values fastest (measured with `npm run bench -- reads`). PostgreSQL ranks
 * every value in one windowed pass (groupStats). SQLite's window functions are slow at that size
 * (~2.5× slower), but its queries cost no round trip: it reads each percentile at its rank instead,
 * walking the stats index of the series in value order, one short query per series.
 */
async function summaryStats(storage: Storage, values: SelectQueryBuilder<any, any, any>): Promise<SeriesStats[]> {
  const db = storage.db as unknown as Kysely<any>
  if (storage.dialect === 'postgres') {
    const grouped = await groupStats(db, values, ['service', 'metric', 'unit'].map((name) => ({ name, expression: sql.ref(name) })))
    return grouped.map(({ row, stats }) => ({ service: row.service as string | null, metric: String(row.metric), unit: row.unit as string | null, ...stats }))
  }
  const series = await values
    .select((eb) => ['service', 'metric', 'unit', eb.fn.countAll().as('count'), eb.fn.min('value').as('min'), eb.fn.max('value').as('max'), eb.fn.avg('value').as('avg')])
    .groupBy(['service', 'metric', 'unit'])
    .execute()
  const stats = []
  for (const row of series) {
    const count = Number(row.count)
    const inSeries = values
      .where('service', row.service === null ? 'is' : '=', row.service)
      .where('metric', '=', row.metric)
      .where('unit', row.unit === null ? 'is' : '=', row.unit)
    const ranked = await db
      .selectNoFrom(PERCENTILES.map((p) => inSeries.select('value').orderBy('value').limit(1).offset(Math.floor((p * count + 99) / 100) - 1).as(`p${p}`)))
      .executeTakeFirstOrThrow()
    stats.push({ service: row.service as string | null, metric: String(row.metric), unit: row.unit as string | null, ...statsOf(row, ranked) })
  }
  return stats
}

/** The bucket width: the one asked for, else the narrowest that keeps the series within AUTO_BUCKETS points. */
function bucketWidth(asked: BucketName | undefined, rangeMs: number): BucketName {
  if (asked !== undefined) {
    if (rangeMs / BUCKETS[asked] > MAX_BUCKETS) throw badQuery('bucket', `${asked} gives more than ${MAX_BUCKETS} buckets over from–to; use a wider bucket or a shorter range`)
    return asked
  }
  const names = Object.keys(BUCKETS) as BucketName[]
  return names.find((name) => rangeMs / BUCKETS[name] <= AUTO_BUCKETS) ?? '1d'
}

function projectValues(ctx: PortalContext, projectId: string, from: string | undefined, to: string | undefined, service: string | undefined) {
  const events = withinTimeRange(moduleDb(ctx).selectFrom('performance_events').where('project_id', '=', projectId), from, to)
  return service === undefined ? events : events.where('service', '=', service)
}

export const performanceReads = moduleReads((app, ctx) => {
  app.get(
    '/summary',
    readRoute({
      tag: 'performance',
      operationId: 'getPerformanceSummary',
      summary: 'count, min, max, avg, p50, p95 and p99 per service, metric and unit over a time range',
      description: 'Percentiles are nearest-rank (no interpolation): the same figures on SQLite and PostgreSQL. Without `from`/`to`, over all stored values.',
      query: { ...FilterQuery, metric: Type.Optional(Type.String({ description: 'only this metric' })) },
      response: Summary,
    }),
    async (request) => {
      const { project_id: projectId, from, to, service, metric } = request.query
      await requireReadableProject(ctx, request, projectId)
      const values = projectValues(ctx, projectId, from, to, service)
      const stats = await summaryStats(ctx.storage, metric === undefined ? values : values.where('metric', '=', metric))
      const data = stats.sort((a, b) => String(a.service).localeCompare(String(b.service)) || a.metric.localeCompare(b.metric) || String(a.unit).localeCompare(String(b.unit)))
      return { data }
    },
  )

  app.get(
    '/series',
    readRoute({
      tag: 'performance',
      operationId: 'getPerformanceSeries',
      summary: 'One metric over time: count, min, max, avg and nearest-rank percentiles per time bucket',
      description:
        `Without \`to\`, up to now; without \`from\`, the day before \`to\`. \`bucket\` is one of ${Object.keys(BUCKETS).join(', ')}; ` +
        `without it, the narrowest giving at most ${AUTO_BUCKETS} buckets. More than ${MAX_BUCKETS} buckets is a 400.`,
      query: {
        ...FilterQuery,
        metric: Type.String({ description: 'the metric to chart' }),
        bucket: Type.Optional(Type.Union(Object.keys(BUCKETS).map((name) => Type.Literal(name as BucketName)), { description: 'the bucket width; chosen from the range when absent' })),
      },
      response: Series,
    }),
    async (request) => {
      const { project_id: projectId, service, metric } = request.query
      const toMs = queryTime(request.query.to) ?? Date.now()
      const fromMs = queryTime(request.query.from) ?? toMs - DAY_MS
      if (fromMs >= toMs) throw badQuery('from', 'must be before to')
      const bucket = bucketWidth(request.query.bucket as BucketName | undefined, toMs - fromMs)
      await requireReadableProject(ctx, request, projectId)
      const from = isoFromMs(fromMs)
      const to = isoFromMs(toMs)
      const width = BUCKETS[bucket]
      const stats = await groupStats(moduleDb(ctx), projectValues(ctx, projectId, from, to, service).where('metric', '=', metric), [
        { name: 'bucket_start', expression: sql`(ts / ${sql.lit(width)}) * ${sql.lit(width)}` },
      ])
      const data = stats
        .sort((a, b) => Number(a.row.bucket_start) - Number(b.row.bucket_start))
        .map(({ row, stats }) => ({ start: isoFromMs(Number(row.bucket_start)), ...stats }))
      return { metric, service: service ?? null, bucket, from, to, data }
    },
  )
})
