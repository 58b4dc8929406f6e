import { Type } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { sql } from 'kysely'
import type { PortalContext } from '../../context.ts'
import { rankedPercentiles, type PercentileRow } from '../../storage/percentiles.ts'
import { queryTime } from '../../http/list.ts'
import { badQuery, IsoTime, Nullable, ProjectQuery, eventsDb, moduleReads, readRoute, requireReadableProject } from '../read-route.ts'
import { isoFromMs, withinTimeRange, TimeWindowQuery } from '../time-window.ts'
import type { PerformanceTables } from './tables.ts'

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

const Summary = named(
  'PerformanceSummary',
  Type.Object({
    data: Type.Array(named('PerformanceSummaryRow', Type.Object({ service: Nullable(Type.String()), metric: Type.String(), unit: Nullable(Type.String()), ...Stats }))),
  }),
)

const BUCKETS = { '1m': 60_000, '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '6h': 21_600_000, '1d': 86_400_000 } as const
type BucketName = keyof typeof BUCKETS
const MAX_BUCKETS = 1000
const AUTO_BUCKETS = 200
const DAY_MS = 86_400_000

const Series = named('PerformanceSeries', Type.Object({
  metric: Type.String(),
  service: Nullable(Type.String()),
  bucket: Type.String({ description: 'the bucket width used' }),
  from: IsoTime(),
  to: IsoTime(),
  data: Type.Array(Type.Object({ start: IsoTime('bucket start (UTC, aligned to the epoch)'), ...Stats }), { description: 'oldest first; buckets without values are left out' }),
}))

const FilterQuery = {
  ...ProjectQuery,
  ...TimeWindowQuery('values'),
  service: Type.Optional(Type.String({ description: 'only values of this service' })),
}

/** The figures of one group, from its row of `percentilesByGroup` or `rankedPercentiles`. */
function statsOf(row: PercentileRow) {
  return {
    count: Number(row.count),
    min: Number(row.min),
    max: Number(row.max),
    avg: Math.round(Number(row.avg) * 1e6) / 1e6,
    p50: Number(row.p50),
    p95: Number(row.p95),
    p99: Number(row.p99),
  }
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
  const events = withinTimeRange(eventsDb<PerformanceTables>(ctx, 'performance_events').selectFrom('performance_events').where('project_id', '=', projectId), from, to)
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
      const rows = await ctx.storage.eventsOf('performance_events').percentilesByGroup(metric === undefined ? values : values.where('metric', '=', metric), ['service', 'metric', 'unit'], PERCENTILES)
      const stats = rows.map((row) => ({ service: row.service as string | null, metric: String(row.metric), unit: row.unit as string | null, ...statsOf(row) }))
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
      // ts - ts % width: whole in every store (DuckDB's `/` divides as floats).
      const buckets = [{ name: 'bucket_start', expression: sql`ts - ts % ${sql.lit(width)}` }]
      const rows = await rankedPercentiles(projectValues(ctx, projectId, from, to, service).where('metric', '=', metric), buckets, PERCENTILES, eventsDb<PerformanceTables>(ctx, 'performance_events'))
      const data = rows
        .sort((a, b) => Number(a.bucket_start) - Number(b.bucket_start))
        .map((row) => ({ start: isoFromMs(Number(row.bucket_start)), ...statsOf(row) }))
      return { metric, service: service ?? null, bucket, from, to, data }
    },
  )
})
