import { Type } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { queryTime } from '../../http/list.ts'
import { IsoTime, Nullable, ProjectQuery, eventsDb, moduleDb, moduleReads, readRoute, requireReadableProject } from '../read-route.ts'
import { TimeWindowQuery } from '../time-window.ts'
import { sql } from 'kysely'
import { HistogramQuery, histogramBuckets } from '../../http/histogram.ts'
import { HOUR_MS, countLevels } from './level-counts.ts'
import type { LogTables } from './tables.ts'

const LevelCounts = named('LogLevelCounts', Type.Object({
  data: Type.Array(Type.Object({ level: Nullable(Type.String({ description: 'null for logs sent without a level' })), count: Type.Integer() })),
  total: Type.Integer({ description: 'logs in the window' }),
}))

const LevelHistogram = named('LogLevelHistogram', Type.Object({
  data: Type.Array(
    Type.Object({
      start: IsoTime('the bucket’s first instant'),
      total: Type.Integer(),
      levels: Type.Array(Type.Object({ level: Nullable(Type.String()), count: Type.Integer() }), { description: 'levels with logs in the bucket' }),
    }),
    { description: 'every bucket of the window, oldest first (empty ones with total 0)' },
  ),
  total: Type.Integer({ description: 'logs in the window' }),
}))

export const logReads = moduleReads((app, ctx) => {
  app.get(
    '/histogram',
    readRoute({
      tag: 'logs',
      operationId: 'countLogLevelsOverTime',
      summary: 'How many logs of each level a project wrote per time bucket',
      description:
        'Log volume over [from, to) by level, for a histogram. Buckets start at multiples of `bucket_seconds` since the epoch (UTC); the first and last are cut to the window. ' +
        'With a bucket of whole hours and no `module`, whole hours are read from the hourly level counts and only the partial hours at the ends from the logs.',
      query: {
        ...ProjectQuery,
        ...HistogramQuery('logs'),
        module: Type.Optional(Type.String({ description: 'only logs of this module' })),
      },
      response: LevelHistogram,
    }),
    async (request) => {
      const { project_id: projectId, module } = request.query
      await requireReadableProject(ctx, request, projectId)
      const { fromMs, toMs, bucketMs } = histogramBuckets(request.query)
      const db = moduleDb<LogTables>(ctx)
      const events = eventsDb<LogTables>(ctx, 'log_events')
      // (ts - ts % b) / b: whole in every store; DuckDB's `/` divides as floats and its cast rounds, so a plain ts / b lands late buckets in the next one.
      const bucketOf = (column: string) => sql<number>`cast((${sql.ref(column)} - ${sql.ref(column)} % ${sql.lit(bucketMs)}) / ${sql.lit(bucketMs)} as bigint)`
      const countLogs = (from: number, to: number) => {
        let query = events
          .selectFrom('log_events')
          .select((eb) => [bucketOf('ts').as('bucket'), 'level', eb.fn.countAll().as('count')])
          .where('project_id', '=', projectId)
          .where('ts', '>=', from)
          .where('ts', '<', to)
        if (module !== undefined) query = query.where('module', '=', module)
        return query.groupBy([bucketOf('ts'), 'level']).execute()
      }
      const parts: Promise<Record<string, unknown>[]>[] = []
      const firstWholeHour = Math.ceil(fromMs / HOUR_MS) * HOUR_MS
      const endOfWholeHours = Math.floor(toMs / HOUR_MS) * HOUR_MS
      if (module === undefined && bucketMs % HOUR_MS === 0 && firstWholeHour < endOfWholeHours) {
        parts.push(
          db
            .selectFrom('log_level_hours')
            .select((eb) => [bucketOf('hour').as('bucket'), 'level', eb.fn.sum('events').as('count')])
            .where('project_id', '=', projectId)
            .where('hour', '>=', firstWholeHour)
            .where('hour', '<', endOfWholeHours)
            .groupBy([bucketOf('hour'), 'level'])
            .execute(),
        )
        if (fromMs < firstWholeHour) parts.push(countLogs(fromMs, firstWholeHour))
        if (endOfWholeHours < toMs) parts.push(countLogs(endOfWholeHours, toMs))
      } else {
        parts.push(countLogs(fromMs, toMs))
      }
      const counts = new Map<number, Map<string | null, number>>()
      for (const row of (await Promise.all(parts)).flat()) {
        const bucket = Number(row.bucket)
        const levels = counts.get(bucket) ?? new Map<string | null, number>()
        const level = (row.level ?? null) as string | null
        levels.set(level, (levels.get(level) ?? 0) + Number(row.count))
        counts.set(bucket, levels)
      }
      const data = []
      for (let start = Math.floor(fromMs / bucketMs) * bucketMs; start < toMs; start += bucketMs) {
        const levels = [...(counts.get(start / bucketMs) ?? [])].filter(([, count]) => count > 0).map(([level, count]) => ({ level, count }))
        data.push({ start: new Date(start).toISOString(), total: levels.reduce((sum, row) => sum + row.count, 0), levels })
      }
      return { data, total: data.reduce((sum, bucket) => sum + bucket.total, 0) }
    },
  )


  app.get(
    '/levels',
    readRoute({
      tag: 'logs',
      operationId: 'countLogLevels',
      summary: 'How many logs of each level a project wrote over a time range',
      description: 'Levels are counted as sent (case kept), most frequent first. Without `from`/`to`, over all stored logs.',
      query: {
        ...ProjectQuery,
        ...TimeWindowQuery('logs'),
        module: Type.Optional(Type.String({ description: 'only logs of this module' })),
      },
      response: LevelCounts,
    }),
    async (request) => {
      const { project_id: projectId, from, to, module } = request.query
      await requireReadableProject(ctx, request, projectId)
      const db = moduleDb<LogTables>(ctx)
      const events = eventsDb<LogTables>(ctx, 'log_events')
      const countLogs = (fromMs: number | undefined, toMs: number | undefined) => {
        let query = events
          .selectFrom('log_events')
          .select((eb) => ['level', eb.fn.countAll().as('count')])
          .where('project_id', '=', projectId)
        if (module !== undefined) query = query.where('module', '=', module)
        if (fromMs !== undefined) query = query.where('ts', '>=', fromMs)
        if (toMs !== undefined) query = query.where('ts', '<', toMs)
        return query.groupBy('level')
      }
      // The hourly counts do not know modules: with `module`, the logs themselves are counted.
      const rows =
        module === undefined
          ? await countLevels(db, projectId, queryTime(from), queryTime(to), countLogs)
          : (await countLogs(queryTime(from), queryTime(to)).execute()).map((row) => ({ level: row.level as string | null, count: Number(row.count) }))
      const data = rows.sort((a, b) => b.count - a.count || Number(a.level === null) - Number(b.level === null) || String(a.level).localeCompare(String(b.level)))
      return { data, total: data.reduce((sum, row) => sum + row.count, 0) }
    },
  )
})
