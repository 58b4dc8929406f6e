import { startTestPortal, type Dialect, type TestPortal, type TestProject, type TestResponse } from '../support/portal.ts'
import type { NotificationType } from '../../src/notifications.ts'

/**
 * A portal for the errors tests. Load shedding is off: the machine these run on is shared, and a
 * busy neighbour must not turn a grouping assertion into a 503. Captures count against ingest
 * limits, which bursts of concurrent captures here would reach; those limits are tested elsewhere.
 */
export function startErrorsPortal(dialect: Dialect): Promise<TestPortal> {
  return startTestPortal(dialect, { LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0', INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000', INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000' })
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

/** Records what the portal announces, in place of the no-op the webhooks module will replace. */
export function recordNotifications(t: TestPortal): { type: NotificationType; projectId: string; data: Record<string, unknown> }[] {
  const published: { type: NotificationType; projectId: string; data: Record<string, unknown> }[] = []
  t.portal.ctx.notifications = { publish: async (_trx, projectId, type, data) => void published.push({ type, projectId, data }) }
  return published
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
