import { Type } from 'typebox'
import { named } from '../http/openapi-components.ts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { problemResponses } from '../http/problem.ts'
import { recordManagementAction } from '../modules/audit/record.ts'
import { modules } from '../modules/registry.ts'
import { findProject } from '../projects/store.ts'
import { readProjectRetentions, replaceProjectRetention, retentionDays, type ProjectRetention } from './policy.ts'

const Days = Type.Integer({ minimum: 1, maximum: 36_500, description: 'days an event is kept; it goes within a day after that (whole UTC days)' })

const ModuleDays = Type.Object(Object.fromEntries(modules.map((module) => [module.type, Type.Optional(Days)])), {
  additionalProperties: false,
  description: 'days per event type, over `days` and the install’s settings',
})

const RetentionInput = named(
  'ProjectRetentionInput',
  Type.Object(
    {
      days: Type.Union([Days, Type.Null()], { description: 'days for every event type whose module keeps no default of its own (audit does); null: the install’s settings' }),
      modules: Type.Optional(ModuleDays),
    },
    { additionalProperties: false },
  ),
)

const Retention = named('ProjectRetention', Type.Object({
  projectId: Type.String(),
  days: Type.Union([Type.Integer(), Type.Null()], { description: 'the project’s setting for every type; null when it has none' }),
  modules: Type.Record(Type.String(), Type.Integer(), { description: 'the project’s settings per event type' }),
  effective: Type.Record(
    Type.String(),
    Type.Object({
      days: Type.Integer(),
      source: Type.Union([Type.Literal('project_module'), Type.Literal('project'), Type.Literal('install')], {
        description: 'which setting decided: the project’s for this type, the project’s `days`, or the install’s `RETENTION_DAYS[_<TYPE>]`',
      }),
      statusPath: Type.String({ description: 'the module’s status read, which answers its size on disk and oldest event' }),
    }),
    { description: 'by event type: the days in force, and which setting decided' },
  ),
}))

const ProjectParams = Type.Object({ id: Type.String({ description: 'the project, prj_…' }) })

/** A project's retention: read by any access token, replaced by an admin, each change in the project's audit module. */
export const retentionRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = ctx.storage.db
  const tags = ['projects']

  function view(projectId: string, setting: ProjectRetention) {
    return {
      projectId,
      days: setting.days,
      modules: setting.modules,
      effective: Object.fromEntries(modules.map((module) => [module.type, { ...retentionDays(ctx.config, module, setting), statusPath: `${module.basePath}/status` }])),
    }
  }

  async function current(projectId: string): Promise<ProjectRetention> {
    return (await readProjectRetentions(db, projectId)).get(projectId) ?? { days: null, modules: {} }
  }

  app.get(
    '/api/projects/:id/retention',
    {
      config: { access: 'read' },
      schema: {
        tags,
        operationId: 'getProjectRetention',
        summary: 'Read how long a project’s events are kept',
        description: 'The project’s own settings and, per event type, the days in force. See docs/retention.md.',
        params: ProjectParams,
        response: { 200: Retention, ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const project = await findProject(db, accessPrincipal(request).orgId, request.params.id)
      return view(project.id, await current(project.id))
    },
  )

  app.put(
    '/api/projects/:id/retention',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        operationId: 'putProjectRetention',
        summary: 'Set how long a project’s events are kept',
        description:
          'Replaces the project’s settings: `days` for every event type (audit keeps its own default unless `modules.audit` is given) and `modules` per type. ' +
          'Rows older than the days in force are deleted by the next retention pass; error groups stay, their occurrences go. The change is written to the project’s audit module.',
        params: ProjectParams,
        body: RetentionInput,
        response: { 200: Retention, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const project = await findProject(db, principal.orgId, request.params.id)
      const setting: ProjectRetention = { days: request.body.days, modules: (request.body.modules ?? {}) as Record<string, number> }
      await db.transaction().execute(async (trx) => {
        const before = (await readProjectRetentions(trx, project.id)).get(project.id) ?? { days: null, modules: {} }
        await replaceProjectRetention(trx, project.id, setting, Date.now())
        await recordManagementAction(trx, ctx, project.id, principal, 'project.retention_updated', project.id, { from: before, to: setting })
      })
      return view(project.id, setting)
    },
  )
}
