import createClient from 'openapi-fetch'
import type { components, paths } from './generated/portal-api.ts'

// Named types from the document's components: what a generated client lets its users write.
type ErrorGroupDetail = components['schemas']['ErrorGroupDetail']
type LogEvent = components['schemas']['LogEvent']
type Problem = components['schemas']['Problem']

export interface WalkThroughResult {
  projectId: string
  accepted: number
  rejected: number
  logMessages: string[]
  group: Pick<ErrorGroupDetail, 'name' | 'count' | 'status'>
  notFound: { status: number; code: Problem['code'] }
}

/**
 * A user's first session, written against the client generated from the live document with
 * openapi-typescript and openapi-fetch: create a project and a key, send a signed batch, read the
 * logs back, capture an error and open its group, and meet a typed 404.
 */
export async function walkThrough(baseUrl: string, adminToken: string, sign: (secret: string, body: string) => string): Promise<WalkThroughResult> {
  const admin = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${adminToken}` } })
  const project = await admin.POST('/api/projects', { body: { name: 'walk-through' } })
  if (!project.data) throw new Error(`createProject: ${project.response.status}`)
  const projectId = project.data.id
  const key = await admin.POST('/api/projects/{id}/keys', { params: { path: { id: projectId } }, body: { name: 'generated client' } })
  if (!key.data) throw new Error(`createApiKey: ${key.response.status}`)

  const writer = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${key.data.key}` } })
  const batch: components['schemas']['IngestRequest'] = {
    events: [
      { type: 'log', ts: new Date().toISOString(), data: { level: 'info', message: 'hello from a generated client' } },
      { type: 'audit', ts: new Date().toISOString(), data: {} },
    ],
  }
  // The signature covers the exact bytes sent, so the body is serialised once, here.
  const body = JSON.stringify(batch)
  const ingested = await writer.POST('/api/ingest', {
    params: { header: { 'x-service-signature': sign(key.data.webhookSecret, body) } },
    body: batch,
    bodySerializer: () => body,
  })
  if (!ingested.data) throw new Error(`ingestEvents: ${ingested.response.status} ${JSON.stringify(ingested.error)}`)

  const logs = await admin.GET('/api/modules/logs/events', { params: { query: { project_id: projectId } } })
  if (!logs.data) throw new Error(`listLogEvents: ${logs.response.status}`)
  const logEvents: LogEvent[] = logs.data.data

  const captured = await writer.POST('/api/errors/capture', { body: { name: 'TypeError', message: 'cart is undefined' } })
  if (!captured.data) throw new Error(`captureError: ${captured.response.status}`)
  const detail = await admin.GET('/api/errors/groups/{fingerprint}', { params: { path: { fingerprint: captured.data.groupFingerprint } } })
  if (!detail.data) throw new Error(`getErrorGroup: ${detail.response.status}`)

  const missing = await admin.GET('/api/projects/{id}', { params: { path: { id: 'prj_missing' } } })
  if (!missing.error) throw new Error('getProject of a missing project succeeded')
  const code: 'not_found' | 'missing_token' | 'invalid_token' | 'access_token_required' | 'invalid_request' | 'invalid_url' | 'overloaded' | 'database_unavailable' | 'authorization_unavailable' | 'headers_too_large' | undefined = missing.error.code

  return {
    projectId,
    accepted: ingested.data.accepted,
    rejected: ingested.data.rejected.length,
    logMessages: logEvents.map((event) => event.data.message),
    group: { name: detail.data.name, count: detail.data.count, status: detail.data.status },
    notFound: { status: missing.response.status, code },
  }
}
