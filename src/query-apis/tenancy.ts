import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { ProblemError } from '../http/problem.ts'
import { findProject } from '../projects/store.ts'

/** Loki's and Tempo's tenant header: here, the project a query reads. */
export const TENANT_HEADER = 'x-scope-orgid'

export const TenantQuery = {
  project_id: Type.Optional(
    Type.String({
      description:
        'the project to read (prj_…), for clients that cannot set headers (promtool); the `X-Scope-OrgID` header names it otherwise and wins when both are sent. ' +
        '404 unless it is a live project of the token’s organisation.',
    }),
  ),
}

/** Why a query names no readable project, in words each API puts into its own error shape. */
export class TenantError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message)
  }
}

/**
 * The project a Grafana data source or CLI reads: `X-Scope-OrgID`, else `?project_id=`. A project of another
 * organisation, or a deleted one, is answered as absent (404), never as forbidden.
 */
export async function tenantProject(ctx: PortalContext, request: FastifyRequest): Promise<string> {
  const header = request.headers[TENANT_HEADER]
  const fromHeader = Array.isArray(header) ? header[0] : header
  const fromQuery = (request.query as { project_id?: string } | undefined)?.project_id
  const projectId = fromHeader?.trim() || fromQuery
  if (!projectId) throw new TenantError(400, 'no project chosen: send the header X-Scope-OrgID: prj_… (the tenant of Loki and Tempo), or the query parameter project_id')
  try {
    await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
  } catch (error) {
    if (error instanceof ProblemError && error.status === 404) throw new TenantError(404, `project ${projectId} was not found`)
    throw error
  }
  return projectId
}
