import type { TestPortal, TestProject, TestResponse } from '../support/portal.ts'

/** POSTs a capture with the project's API key, as an SDK would (no signature). */
export function capture(t: TestPortal, project: TestProject, body: unknown): Promise<TestResponse> {
  return t.request('POST', '/api/errors/capture', { token: project.key, body })
}

/** A V8 stack trace of `loadUser` called from `handle`, with the given line and path prefix. */
export function nodeStack(options: { line?: number; prefix?: string; caller?: string } = {}): string {
  const { line = 42, prefix = '/srv/app', caller = 'handle' } = options
  return [
    "TypeError: Cannot read properties of undefined (reading 'id')",
    `    at loadUser (${prefix}/src/users.ts:${line}:13)`,
    `    at ${caller} (${prefix}/src/routes.ts:${line + 7}:5)`,
    `    at Layer.handle [as handle_request] (${prefix}/node_modules/express/lib/router/layer.js:95:5)`,
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  ].join('\n')
}
