import { Type, type TSchema } from 'typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { PortalContext } from '../context.ts'
import { Problem, problemErrorHandler, problemResponses } from '../http/problem.ts'

/**
 * A response entry of another API's error shape: Loki and Tempo answer a refused query with its reason as
 * plain text. A malformed URL is refused before any route, with the portal's problem body, so 400 lists both.
 */
export function plainTextError(description: string, status: number): TSchema {
  const content: Record<string, { schema: TSchema }> = { 'text/plain': { schema: Type.String({ description: 'why, in the words of Loki or Tempo' }) } }
  if (status === 400) content['application/problem+json'] = { schema: Problem }
  return { description, content } as unknown as TSchema
}

/** The responses of a query API's read: its 200, its own 400 and 404, and the portal's 401, 403 and 503 (authentication comes first). */
export function queryApiResponses(ok: TSchema, error: (description: string, status: number) => TSchema): Record<number, TSchema> {
  return {
    200: ok,
    400: error('The query or a parameter is refused (named in the message), or no project is chosen.', 400),
    404: error('The project named by X-Scope-OrgID or project_id is not a live project of the token’s organisation.', 404),
    ...problemResponses(401, 403, 503),
  }
}

/**
 * The error handler of a query API's routes: errors it knows (`known` answers them, in the API's own shape) and
 * schema validation go to `send`; the rest (401, 403, database outages) get the portal's problem bodies.
 */
export function queryApiErrorHandler(ctx: PortalContext, known: (error: unknown) => { status: number; message: string } | undefined, send: (reply: FastifyReply, status: number, message: string) => unknown) {
  const portalHandler = problemErrorHandler(ctx.storage.isUnavailable)
  return function handleError(this: unknown, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const answer = known(error)
    if (answer) return send(reply, answer.status, answer.message)
    if (error.validation) return send(reply, 400, `invalid parameter: ${error.validationContext ?? 'request'}${error.validation[0]?.instancePath ?? ''} ${error.validation[0]?.message ?? error.message}`)
    return portalHandler.call(this, error, request, reply)
  }
}
