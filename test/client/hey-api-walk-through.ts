import { createClient, createConfig } from './generated-hey-api/client/index.ts'
import { createApiKey, createProject, getProject, ingestEvents, listLogEvents, listTenantPlans } from './generated-hey-api/sdk.gen.ts'
import type { IngestRequest, LogEvent, Problem, TenantPlan } from './generated-hey-api/types.gen.ts'

export interface HeyApiWalkThroughResult {
  accepted: number
  logMessages: string[]
  plans: Pick<TenantPlan, 'plan' | 'ingestLimitPerSecond'>[]
  notFound: { status: number; code: Problem['code'] }
}

/**
 * The same first session through a second generator, @hey-api/openapi-ts (its fetch client and SDK):
 * one function per operationId, named types per component, a typed problem on a 404.
 */
export async function heyApiWalkThrough(baseUrl: string, adminToken: string, sign: (secret: string, body: string) => string): Promise<HeyApiWalkThroughResult> {
  const admin = createClient(createConfig({ baseUrl, headers: { authorization: `Bearer ${adminToken}` } }))
  const project = await createProject({ client: admin, body: { name: 'hey-api walk-through' } })
  if (!project.data) throw new Error(`createProject: ${project.response.status}`)
  const projectId = project.data.id
  const key = await createApiKey({ client: admin, path: { id: projectId }, body: { name: 'hey-api client' } })
  if (!key.data) throw new Error(`createApiKey: ${key.response.status}`)

  const writer = createClient(createConfig({ baseUrl, headers: { authorization: `Bearer ${key.data.key}` } }))
  const now = new Date().toISOString()
  const batch: IngestRequest = {
    events: [
      { type: 'log', ts: now, data: { level: 'info', message: 'hello from hey-api' } },
      { type: 'tenant', ts: now, data: { plan: 'pro', ingestLimitPerSecond: 50 } },
    ],
  }
  // The signature covers the exact bytes sent, so the body is serialised once, here.
  const body = JSON.stringify(batch)
  const ingested = await ingestEvents({ client: writer, body: batch, bodySerializer: () => body, headers: { 'x-service-signature': sign(key.data.webhookSecret, body) } })
  if (!ingested.data) throw new Error(`ingestEvents: ${ingested.response.status} ${JSON.stringify(ingested.error)}`)

  const logs = await listLogEvents({ client: admin, query: { project_id: projectId } })
  if (!logs.data) throw new Error(`listLogEvents: ${logs.response.status}`)
  const logEvents: LogEvent[] = logs.data.data
  const plans = await listTenantPlans({ client: admin, query: { project_id: projectId } })
  if (!plans.data) throw new Error(`listTenantPlans: ${plans.response.status}`)

  const missing = await getProject({ client: admin, path: { id: 'prj_missing' } })
  if (!missing.error) throw new Error('getProject of a missing project succeeded')
  const problem: Problem = missing.error

  return {
    accepted: ingested.data.accepted,
    logMessages: logEvents.map((event) => event.data.message),
    plans: plans.data.data.map(({ plan, ingestLimitPerSecond }) => ({ plan, ingestLimitPerSecond })),
    notFound: { status: missing.response.status, code: problem.code },
  }
}
