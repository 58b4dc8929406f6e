import { Type } from 'typebox'
import { queryTime } from '../../http/list.ts'
import { Nullable, ProjectQuery, moduleDb, moduleReads, readRoute, requireReadableProject } from '../read-route.ts'
import { TimeWindowQuery } from '../time-window.ts'
import { countLevels } from './level-hours.ts'

const LevelCounts = Type.Object({
  data: Type.Array(Type.Object({ level: Nullable(Type.String({ description: 'null for logs sent without a level' })), count: Type.Integer() })),
  total: Type.Integer({ description: 'logs in the window' }),
})

export const logReads = moduleReads((app, ctx) => {
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
      const db = moduleDb(ctx)
      const countLogs = (fromMs: number | undefined, toMs: number | undefined) => {
        let query = db
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
