import { withoutSecretHeaders } from '../../errors/capture.ts'
import { breadcrumbsOf, sentryTags } from '../../errors/occurrence-context.ts'
import { isPlainObject } from '../../ingest/validate-event.ts'

/** A portal event as `POST /api/ingest` takes it. */
export interface PortalEvent {
  type: string
  ts: string
  data: Record<string, unknown>
}

type Json = Record<string, unknown>

/** The longest `stack` an error event takes (the payload's limit): a longer printed chain keeps its end, where the thrown exception is. */
const MAX_STACK = 262_144

const LOG_LEVELS: Record<string, string> = { debug: 'debug', info: 'info', log: 'info', warning: 'warn', error: 'error', fatal: 'fatal' }

/**
 * A Sentry event as portal events: an exception becomes an `error` event grouped by its structured
 * frames; a message without an exception becomes a `log` event.
 */
export function translateSentryEvent(event: Json, receivedAt: number): PortalEvent[] {
  const ts = timestampOf(event.timestamp, receivedAt)
  const exceptions = exceptionValues(event)
  const message = messageOf(event)
  // captureMessage with attachStacktrace sends its stack as an exception without a type: still a message.
  const isMessage = message !== undefined && !exceptions.some((exception) => typeof exception.type === 'string' && exception.type !== '')
  if (exceptions.length > 0 && !isMessage) return [{ type: 'error', ts, data: errorData(event, exceptions) }]
  if (message === undefined) return []
  const data: Json = { message, level: LOG_LEVELS[String(event.level ?? 'info')] ?? String(event.level) }
  if (typeof event.logger === 'string' && event.logger !== '') data.module = event.logger
  data.fields = contextFields(event)
  const trace = traceContext(event)
  if (trace.traceId) data.traceId = trace.traceId
  if (trace.spanId) data.spanId = trace.spanId
  return [{ type: 'log', ts, data }]
}

/** A transaction's root span (contexts.trace) and its child spans as `trace` events. */
export function translateSentryTransaction(event: Json, receivedAt: number): PortalEvent[] {
  const trace = traceContext(event)
  if (!trace.traceId) return []
  const serviceName = typeof event.server_name === 'string' ? event.server_name : undefined
  const startMs = secondsToMs(event.start_timestamp) ?? receivedAt
  const endMs = secondsToMs(event.timestamp)
  const root: Json = { traceId: trace.traceId, spanId: trace.spanId, name: typeof event.transaction === 'string' ? event.transaction : undefined }
  if (trace.parentSpanId) root.parentSpanId = trace.parentSpanId
  if (serviceName) root.serviceName = serviceName
  if (endMs !== undefined) root.durationMs = Math.max(0, endMs - startMs)
  if (trace.op) root.op = trace.op
  if (trace.status) root.status = trace.status
  const spans = Array.isArray(event.spans) ? event.spans.filter(isPlainObject) : []
  return [
    { type: 'trace', ts: new Date(startMs).toISOString(), data: withoutUndefined(root) },
    ...spans.map((span) => {
      const spanStart = secondsToMs(span.start_timestamp) ?? startMs
      const spanEnd = secondsToMs(span.timestamp)
      return {
        type: 'trace',
        ts: new Date(spanStart).toISOString(),
        data: withoutUndefined({
          traceId: typeof span.trace_id === 'string' ? span.trace_id : trace.traceId,
          spanId: span.span_id,
          parentSpanId: span.parent_span_id,
          serviceName,
          name: span.description ?? span.op,
          op: span.op,
          status: span.status,
          durationMs: spanEnd === undefined ? undefined : Math.max(0, spanEnd - spanStart),
        }),
      }
    }),
  ]
}

function errorData(event: Json, exceptions: Json[]): Json {
  // Sentry lists chained exceptions oldest first: the last one is what was thrown.
  const thrown = exceptions[exceptions.length - 1]
  const data: Json = {}
  if (typeof thrown.type === 'string' && thrown.type !== '') data.name = thrown.type
  if (typeof thrown.value === 'string') data.message = thrown.value
  const frames = framesOf(thrown)
  if (frames.length > 0) data.frames = frames
  for (const [field, key] of [
    ['release', 'release'],
    ['environment', 'environment'],
    ['serverName', 'server_name'],
    ['platform', 'platform'],
    ['eventId', 'event_id'],
    ['transaction', 'transaction'],
    ['level', 'level'],
  ] as const) {
    if (typeof event[key] === 'string' && event[key] !== '') data[field] = event[key]
  }
  if (isPlainObject(event.request)) data.request = withoutSecretHeaders(event.request)
  const fingerprint = fingerprintOf(event.fingerprint)
  if (fingerprint) data.fingerprint = fingerprint
  const tags = sentryTags(event.tags)
  if (tags) data.tags = tags
  const breadcrumbs = breadcrumbsOf(event.breadcrumbs)
  if (breadcrumbs) data.breadcrumbs = breadcrumbs
  data.reportedBy = 'sentry'
  if (isPlainObject(event.contexts)) data.contexts = event.contexts
  if (isPlainObject(event.user)) data.user = event.user
  if (isPlainObject(event.extra)) data.extra = event.extra
  const trace = traceContext(event)
  if (trace.traceId) data.traceId = trace.traceId
  if (trace.spanId) data.spanId = trace.spanId
  // Each earlier exception of the chain with its own frames, so a page can show every one as it shows the thrown one.
  if (exceptions.length > 1) data.chained = exceptions.slice(0, -1).map((exception) => withoutUndefined({ type: exception.type, value: exception.value, frames: framesOf(exception) }))
  // The frames group it; the text keeps what they do not: every exception of the chain and its source lines, as the runtime prints them.
  const printed = printedStack(exceptions, event.platform)
  if (printed) data.stack = printed.length > MAX_STACK ? printed.slice(printed.length - MAX_STACK) : printed
  return data
}

/**
 * The chain of exceptions (oldest first, as Sentry lists them) printed as its runtime would: a Python
 * traceback with each frame's source line and "During handling…" between exceptions, else V8's
 * `Type: message` and `at` lines, innermost first. Undefined when no exception has frames.
 */
export function printedStack(exceptions: Json[], platform: unknown): string | undefined {
  const framesOfException = (exception: Json) => {
    const stacktrace = isPlainObject(exception.stacktrace) ? exception.stacktrace : undefined
    return Array.isArray(stacktrace?.frames) ? stacktrace.frames.filter(isPlainObject).slice(-1000) : []
  }
  // Only when the thrown exception has frames: they, not this text, then group it, as before.
  if (exceptions.length === 0 || framesOfException(exceptions[exceptions.length - 1]).length === 0) return undefined
  const heading = (exception: Json) => `${text(exception.type, 512) ?? 'Error'}: ${text(exception.value, 16_384) ?? ''}`
  if (platform === 'python') {
    return exceptions
      .map((exception) =>
        [
          'Traceback (most recent call last):',
          ...framesOfException(exception).flatMap((frame) => {
            const line = `  File "${text(frame.abs_path ?? frame.filename, 4096) ?? '?'}", line ${count(frame.lineno) ?? '?'}, in ${text(frame.function, 1024) ?? '?'}`
            const source = text(frame.context_line, 1024)?.trim()
            return source ? [line, `    ${source}`] : [line]
          }),
          heading(exception),
        ].join('\n'),
      )
      .join('\n\nDuring handling of the above exception, another exception occurred:\n\n')
  }
  return [...exceptions]
    .reverse()
    .map((exception, index) =>
      [
        `${index > 0 ? 'Caused by: ' : ''}${heading(exception)}`,
        ...framesOfException(exception)
          .reverse()
          .map((frame) => {
            const place = [text(frame.abs_path ?? frame.filename, 4096) ?? '?', count(frame.lineno), count(frame.colno)].filter((part) => part !== undefined).join(':')
            const fn = text(frame.function, 1024)
            return fn ? `    at ${fn} (${place})` : `    at ${place}`
          }),
      ].join('\n'),
    )
    .join('\n')
}

/**
 * Sentry's `fingerprint` (`scope.setFingerprint`), with `{{ default }}` meaning the computed one as in
 * Sentry. Sentry stringifies numbers and drops empty parts; parts past the error payload's bounds are
 * cut rather than refusing the event.
 */
function fingerprintOf(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined
  const parts = value
    .filter((part) => typeof part === 'string' || typeof part === 'number')
    .map((part) => String(part).slice(0, 512))
    .filter((part) => part !== '')
    .slice(0, 32)
  return parts.length > 0 ? parts : undefined
}

/** Sentry frames (outermost first) as the portal's structured frames (innermost first). */
function framesOf(exception: Json) {
  const stacktrace = isPlainObject(exception.stacktrace) ? exception.stacktrace : undefined
  const frames = Array.isArray(stacktrace?.frames) ? stacktrace.frames.filter(isPlainObject) : []
  return frames
    .slice(-1000)
    .reverse()
    .map((frame) =>
      withoutUndefined({
        function: text(frame.function, 1024),
        module: text(frame.module, 1024),
        filename: text(frame.filename ?? frame.abs_path, 4096),
        lineno: count(frame.lineno),
        colno: count(frame.colno),
        inApp: typeof frame.in_app === 'boolean' ? frame.in_app : undefined,
      }),
    )
}

function exceptionValues(event: Json): Json[] {
  const exception = event.exception
  const values = isPlainObject(exception) ? exception.values : Array.isArray(exception) ? exception : undefined
  return Array.isArray(values) ? values.filter(isPlainObject) : []
}

function messageOf(event: Json): string | undefined {
  const message = event.message ?? event.logentry
  if (typeof message === 'string') return message
  if (isPlainObject(message)) {
    if (typeof message.formatted === 'string') return message.formatted
    if (typeof message.message === 'string') return message.message
  }
  return undefined
}

function contextFields(event: Json): Json {
  const fields: Json = { ...(isPlainObject(event.tags) ? event.tags : {}) }
  for (const key of ['release', 'environment', 'server_name', 'platform', 'event_id']) {
    if (typeof event[key] === 'string') fields[key] = event[key]
  }
  if (isPlainObject(event.user)) fields.user = event.user
  if (isPlainObject(event.extra)) fields.extra = event.extra
  return fields
}

function traceContext(event: Json): { traceId?: string; spanId?: string; parentSpanId?: string; op?: string; status?: string } {
  const trace = isPlainObject(event.contexts) && isPlainObject(event.contexts.trace) ? event.contexts.trace : {}
  return {
    traceId: typeof trace.trace_id === 'string' ? trace.trace_id : undefined,
    spanId: typeof trace.span_id === 'string' ? trace.span_id : undefined,
    parentSpanId: typeof trace.parent_span_id === 'string' ? trace.parent_span_id : undefined,
    op: typeof trace.op === 'string' ? trace.op : undefined,
    status: typeof trace.status === 'string' ? trace.status : undefined,
  }
}

/** Sentry timestamps are seconds (a float) or RFC 3339 strings. */
function secondsToMs(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.round(value * 1000)
  if (typeof value === 'string') {
    const ms = Date.parse(value)
    return Number.isFinite(ms) ? ms : undefined
  }
  return undefined
}

function timestampOf(value: unknown, receivedAt: number): string {
  return new Date(Math.min(secondsToMs(value) ?? receivedAt, receivedAt)).toISOString()
}

function text(value: unknown, max: number): string | undefined {
  return typeof value === 'string' ? value.slice(0, max) : undefined
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined
}

function withoutUndefined(object: Json): Json {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined))
}
