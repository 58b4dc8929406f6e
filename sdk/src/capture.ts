/** What a capture may carry besides the exception (DESIGN: Errors module); any other field is kept in the group's metadata. */
export interface CaptureContext {
  release?: string
  environment?: string
  service?: string
  /** the request being served when it happened: method, url, headers you choose to send, … */
  request?: Record<string, unknown>
  /** when it happened; now when absent */
  timestamp?: Date | string
  /** overrides the portal's grouping: occurrences with the same array share a group */
  fingerprint?: string[]
  [field: string]: unknown
}

/** Defaults for every capture of a client, overridden by the context of one capture. */
export type CaptureDefaults = Pick<CaptureContext, 'release' | 'environment' | 'service'>

/** The body of `POST /api/errors/capture` for a thrown value, which need not be an Error. */
export function captureBody(thrown: unknown, context: CaptureContext, defaults: CaptureDefaults): string {
  const { release, environment, service, timestamp, ...rest } = context
  return JSON.stringify({
    ...rest,
    ...describeThrown(thrown),
    release: release ?? defaults.release,
    environment: environment ?? defaults.environment,
    service: service ?? defaults.service,
    timestamp: timestamp instanceof Date ? timestamp.toISOString() : (timestamp ?? new Date().toISOString()),
  })
}

function describeThrown(thrown: unknown): { name: string; message: string; stack?: string } {
  if (thrown instanceof Error) return { name: thrown.name, message: thrown.message, stack: thrown.stack }
  // `throw 'text'` or `Promise.reject({ code: 1 })`: there is no stack to send, only the value.
  return { name: 'NonError', message: typeof thrown === 'string' ? thrown : describeValue(thrown) }
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
