import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { named } from '../http/openapi-components.ts'
import type { PortalContext } from '../context.ts'
import { ProjectQuery, readRoute, requireReadableProject } from '../modules/read-route.ts'
import { TimeWindowQuery } from '../modules/time-window.ts'
import { queryTime } from '../http/list.ts'
import { Change, changeSources } from './sources.ts'

const DEFAULT_WINDOW_MS = 86_400_000
const MAX_CHANGES = 500

const ChangeList = named('ChangeList', Type.Object({
  data: Type.Array(Change, { description: 'newest first' }),
  truncated: Type.Boolean({ description: 'more changes fell in the window than `limit`: the oldest were left out; narrow the window' }),
}))

/** `GET /api/changes`: what changed in a window, from every source of changes, for the markers on charts and the changes panel. */
export const changeRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  app.get(
    '/api/changes',
    readRoute({
      operationId: 'listChanges',
      tag: 'changes',
      summary: 'Deploys, configuration changes and flag changes of a project in a window, newest first',
      description:
        'Every module that declares change markers answers (deploys, configs, feature flags), so a chart can mark them and a person can ask “what changed?” beside it. ' +
        'With `service` or `environment`, changes that name another service or environment are left out; changes that name none (a configuration path, a flag) stay. ' +
        'The window defaults to the last 24 h.',
      query: {
        ...ProjectQuery,
        ...TimeWindowQuery('changes'),
        service: Type.Optional(Type.String({ description: 'only changes of this service, or of none' })),
        environment: Type.Optional(Type.String({ description: 'only changes in this environment, or in none' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CHANGES, default: 200, description: `at most this many, the newest (≤ ${MAX_CHANGES})` })),
      },
      response: ChangeList,
    }),
    async (request) => {
      const { project_id: projectId, service, environment } = request.query
      await requireReadableProject(ctx, request, projectId)
      const toMs = queryTime(request.query.to) ?? Date.now()
      const fromMs = queryTime(request.query.from) ?? toMs - DEFAULT_WINDOW_MS
      const limit = request.query.limit ?? 200
      // One more than asked from each source tells whether any was left out.
      const read = await Promise.all(changeSources().map((source) => source.read(ctx, { projectId, fromMs, toMs, limit: limit + 1 })))
      const matching = read
        .flat()
        .filter((change) => (!service || change.service === null || change.service === service) && (!environment || change.environment === null || change.environment === environment))
        .sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : 0))
      return { data: matching.slice(0, limit), truncated: matching.length > limit }
    },
  )
}
