import { Type } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { badQuery, moduleReads, Nullable, ProjectQuery, readRoute, requireReadableProject } from '../read-route.ts'
import { releaseHealth } from './health.ts'

const DAY_MS = 86_400_000
const Rate = (description: string) => Nullable(Type.Number({ minimum: 0, maximum: 1, description: `${description}; null without sessions` }))

const ReleaseHealthRow = named('ReleaseHealth', Type.Object({
  release: Type.String(),
  environment: Nullable(Type.String()),
  sessions: Type.Integer({ description: 'sessions that started in the window' }),
  crashedSessions: Type.Integer(),
  abnormalSessions: Type.Integer({ description: 'ended abruptly without a crash (an app killed, a hang)' }),
  erroredSessions: Type.Integer({ description: 'saw a handled error, and neither crashed nor ended abnormally' }),
  users: Type.Integer({ description: 'distinct users (`distinctId`) of those sessions' }),
  crashedUsers: Type.Integer({ description: 'users with at least one crashed session' }),
  crashFreeSessions: Rate('1 − crashedSessions / sessions'),
  crashFreeUsers: Rate('1 − crashedUsers / users'),
  sessionAdoption: Rate('this release’s share of the environment’s sessions in the window'),
  userAdoption: Rate('this release’s share of the environment’s users in the window'),
}, { description: 'Release health: crash-free sessions and users, and adoption, of one release in one environment.' }))

export const sessionReads = moduleReads((app, ctx) => {
  app.get(
    '/releases',
    readRoute({
      tag: 'sessions',
      operationId: 'listReleaseHealth',
      summary: 'Release health: crash-free sessions and users and adoption, per release and environment',
      description:
        'From Sentry SDKs’ `session` and `sessions` envelope items (or `session` events), over the sessions that started in [from, to) — the last 24 hours by default, as Sentry shows. ' +
        'A session counts once, in the worst state it reported; most sessions first.',
      query: {
        ...ProjectQuery,
        release: Type.Optional(Type.String({ description: 'only this release (adoption still compares with every release)' })),
        environment: Type.Optional(Type.String({ description: 'only this environment' })),
        from: Type.Optional(Type.String({ format: 'date-time', description: 'sessions started at or after (default: 24 hours before `to`)' })),
        to: Type.Optional(Type.String({ format: 'date-time', description: 'sessions started before (default: now)' })),
      },
      response: Type.Object({ data: Type.Array(ReleaseHealthRow) }),
    }),
    async (request) => {
      const { project_id: projectId, release, environment, from, to } = request.query
      await requireReadableProject(ctx, request, projectId)
      const toMs = to === undefined ? Date.now() : Date.parse(to)
      const fromMs = from === undefined ? toMs - DAY_MS : Date.parse(from)
      if (fromMs >= toMs) throw badQuery('from', 'must be before to')
      return { data: await releaseHealth(ctx.storage.db, { projectId, fromMs, toMs, release, environment }) }
    },
  )
})
