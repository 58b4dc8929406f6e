import { readAll, startTestPortal, type Dialect, type TestPortal, type TestProject, type TestResponse } from '../support/portal.ts'
import type { NotificationType } from '../../src/notifications.ts'
import { startReceiver } from '../webhooks/receiver.ts'

/**
 * A portal for the errors tests. Captures count against ingest limits, which bursts of concurrent
 * captures here would reach; those limits are tested elsewhere.
 * Webhook endpoints on loopback are allowed, for `watchAnnouncements`.
 */
export function startErrorsPortal(dialect: Dialect): Promise<TestPortal> {
  return startTestPortal(dialect, {
    INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000',
    INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  })
}

/** POSTs a capture with the project's API key, as an SDK would (no signature). */
export function capture(t: TestPortal, project: TestProject, body: unknown): Promise<TestResponse> {
  return t.request('POST', '/api/errors/capture', { token: project.key, body })
}

/** Captures and insists on the 201. */
export async function captured(t: TestPortal, project: TestProject, body: unknown): Promise<{ id: string; fingerprint: string; groupFingerprint: string; isNewGroup: boolean }> {
  const response = await capture(t, project, body)
  if (response.status !== 201) throw new Error(`capture: ${response.status} ${response.text}`)
  return response.body
}

export async function groupOf(t: TestPortal, fingerprint: string): Promise<any> {
  const response = await t.request('GET', `/api/errors/groups/${fingerprint}`, { token: t.viewerToken })
  if (response.status !== 200) throw new Error(`group detail: ${response.status} ${response.text}`)
  return response.body
}

export async function listGroups(t: TestPortal, project: TestProject, query = ''): Promise<any> {
  const response = await t.request('GET', `/api/errors/groups?project_id=${project.id}${query}`, { token: t.viewerToken })
  if (response.status !== 200) throw new Error(`group list: ${response.status} ${response.text}`)
  return response.body
}

export interface Announcement {
  type: NotificationType
  projectId: string
  data: Record<string, unknown>
}

/**
 * Subscribes a webhook endpoint (a receiver on loopback, closed with the portal) to everything the
 * project's portal announces; the function returned reads the announcements back over the API, oldest
 * first. Each is committed with what caused it, so it is there as soon as its cause has been answered.
 */
export async function watchAnnouncements(t: TestPortal, project: TestProject): Promise<() => Promise<Announcement[]>> {
  const receiver = await startReceiver()
  const close = t.close
  t.close = async () => {
    await close()
    await receiver.close()
  }
  const endpoint = await t.request('POST', '/api/webhooks/endpoints', { token: t.adminToken, body: { projectId: project.id, url: receiver.url('/ok') } })
  if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${endpoint.text}`)
  return async () => {
    const deliveries = await readAll(t, `/api/webhooks/deliveries?project_id=${project.id}`)
    deliveries.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.messageId.localeCompare(b.messageId))
    const announcements: Announcement[] = []
    for (const delivery of deliveries) {
      const detail = await t.request('GET', `/api/webhooks/deliveries/${delivery.id}`, { token: t.viewerToken })
      announcements.push({ type: delivery.eventType, projectId: delivery.projectId, data: detail.body.payload })
    }
    return announcements
  }
}

/** A V8 stack trace of `loadUser` called from `caller`, with the given line and path prefix. */
export function nodeStack(options: { line?: number; prefix?: string; caller?: string; library?: string } = {}): string {
  const { line = 42, prefix = '/srv/app', caller = 'handle', library = 'express' } = options
  return [
    "TypeError: Cannot read properties of undefined (reading 'id')",
    `    at loadUser (${prefix}/src/users.ts:${line}:13)`,
    `    at ${caller} (${prefix}/src/routes.ts:${line + 7}:5)`,
    `    at Layer.handle [as handle_request] (${prefix}/node_modules/${library}/lib/router/layer.js:${line}:5)`,
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  ].join('\n')
}

export function pythonStack(line = 42, prefix = '/srv/app'): string {
  return [
    'Traceback (most recent call last):',
    `  File "${prefix}/users/views.py", line ${line}, in load_user`,
    '    user = User.objects.get(pk=user_id)',
    `  File "/usr/lib/python3.11/site-packages/django/db/models/query.py", line ${line * 10}, in get`,
    '    raise self.model.DoesNotExist(',
    'User.DoesNotExist: User matching query does not exist.',
  ].join('\n')
}

export function javaStack(line = 42): string {
  return [
    'java.lang.IllegalStateException: pool exhausted',
    `\tat com.acme.users.UserService.load(UserService.java:${line})`,
    `\tat com.acme.Main.main(Main.java:${line + 1})`,
    '\tat java.base/java.lang.Thread.run(Thread.java:833)',
  ].join('\n')
}
