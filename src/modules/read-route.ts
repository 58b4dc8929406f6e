import { Type, type TObject, type TProperties, type TSchema } from 'typebox'
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Kysely } from 'kysely'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { findProject } from '../projects/store.ts'
import type { EventModule, TablesByName } from './module.ts'
import { tablesOf, type Database } from '../storage/tables.ts'

/** How a module's own reads (its `reads.ts`) declare a route, its query and its answer. */

export type ReadsApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

/** A module's reads plugin (its `routes`), handed an app that types requests from their TypeBox schemas. */
export function moduleReads(
  register: (app: ReadsApp, ctx: PortalContext, module: EventModule) => void,
): FastifyPluginAsync<{ ctx: PortalContext; module: EventModule }> {
  return async (instance, { ctx, module }) => register(instance.withTypeProvider<TypeBoxTypeProvider>(), ctx, module)
}

/** Route options of a read: any access token, unknown query parameters refused, every status documented. */
export function readRoute<Q extends TProperties, R extends TSchema, P extends TProperties = {}>(spec: {
  /** stable camelCase name of the operation, for generated clients */
  operationId: string
  tag: string
  summary: string
  description: string
  query: Q
  params?: P
  response: R
}) {
  return {
    config: { access: 'read' as const },
    schema: {
      operationId: spec.operationId,
      tags: [spec.tag],
      summary: spec.summary,
      description: spec.description,
      params: Type.Object(spec.params ?? ({} as P), { additionalProperties: false }) as TObject<P>,
      querystring: Type.Object(spec.query, { additionalProperties: false }),
      response: { 200: spec.response, ...problemResponses(400, 401, 403, 404, 503) },
    },
  }
}

export const ProjectQuery = { project_id: Type.String({ description: 'the project to read (prj_…); 404 unless it is a live project of your organisation', examples: ['prj_01JD3Z8Q6R2N5M7K9P4TXYZABC'] }) }

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const IsoTime = (description?: string) => Type.String({ format: 'date-time', description })

/**
 * The portal's database typed with a module's own tables (`moduleDb<LogTables>(ctx)`), which each module
 * declares in its `tables.ts`; generic code that is handed a table's name uses `TablesByName`.
 */
export function moduleDb<T = TablesByName>(ctx: PortalContext): Kysely<Database & T> {
  return tablesOf<T>(ctx.storage.db)
}

/** The event store holding `table`, a columnar module's (`EventModule.columnar`): every read of its events goes here. */
export function eventsDb<T = TablesByName>(ctx: PortalContext, table: string): Kysely<Database & T> {
  return tablesOf<T>(ctx.storage.eventsOf(table).db)
}

/** Every read is scoped to one live project of the caller's organisation; anything else is a 404. */
export async function requireReadableProject(ctx: PortalContext, request: FastifyRequest, projectId: string): Promise<void> {
  await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
}

/** A 400 that names the query parameter at fault, like the schema's own. */
export function badQuery(parameter: string, problem: string): ProblemError {
  return new ProblemError(400, 'invalid_request', `query.${parameter}: ${problem}`)
}
