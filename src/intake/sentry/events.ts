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

/**
 * A Sentry event as an `error` event, whatever it holds, as Sentry makes every event an issue: its
 * exceptions group it by their frames, a message without exception (captureMessage) by its template,
 * an event with neither is `<unlabeled event>`. A field of a shape Sentry does not take is left out
 * and named in the occurrence's `droppedFields`, as Sentry keeps such an event and notes the field.
 */
export function translateSentryEvent(event: Json, receivedAt: number): PortalEvent[] {
  const dropped: string[] = []
  const exceptions = exceptionValues(event, dropped)
  const logEntry = logEntryOf(event, dropped)
  const data = errorData(event, exceptions, logEntry)
  if (dropped.length > 0) data.droppedFields = dropped
  return [{ type: 'error', ts: timestampOf(event.timestamp, receivedAt), data }]
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

function errorData(event: Json, exceptions: Json[], logEntry: LogEntry | undefined): Json {
  // Sentry lists chained exceptions oldest first: the last one is what was thrown.
  const thrown = exceptions.length > 0 ? exceptions[exceptions.length - 1] : undefined
  const data: Json = {}
  const type = thrown && lenientText(thrown.type, 512)
  if (type) data.name = type
  // An exception without type is a message's stack (captureMessage with attachStacktrace): the message titles it.
  const value = thrown && lenientText(thrown.value, 65_536)
  data.message = (type ? value : undefined) ?? logEntry?.formatted ?? value ?? (type ? '' : '<unlabeled event>')
  // What groups a message event: its template, else its text (its stack, when the SDK attached one, does not).
  if (!type && logEntry) data.messageTemplate = logEntry.template ?? logEntry.formatted
  const frames = thrown ? framesOf(thrown) : eventFrames(event)
  if (frames.length > 0) data.frames = frames
  const mechanism = thrown && mechanismOf(thrown)
  if (mechanism) data.mechanism = mechanism
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
  if (exceptions.length > 1) {
    data.chained = exceptions
      .slice(0, -1)
      .map((exception) => withoutUndefined({ type: lenientText(exception.type, 512), value: lenientText(exception.value, 65_536), frames: framesOf(exception), mechanism: mechanismOf(exception) }))
  }
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
  return portalFrames(exception.stacktrace)
}

function portalFrames(stacktrace: unknown): Json[] {
  const frames = isPlainObject(stacktrace) && Array.isArray(stacktrace.frames) ? stacktrace.frames : []
  // The innermost 1,000, innermost first; built field by field (a frame's object was a tenth of translating an event).
  const portal: Json[] = []
  for (let index = frames.length - 1; index >= 0 && portal.length < 1000; index--) {
    const frame = frames[index]
    if (isPlainObject(frame)) portal.push(portalFrame(frame))
  }
  return portal
}

function portalFrame(frame: Json): Json {
  const portal: Json = {}
  const fn = text(frame.function, 1024)
  if (fn !== undefined) portal.function = fn
  const module = text(frame.module, 1024)
  if (module !== undefined) portal.module = module
  const filename = text(frame.filename ?? frame.abs_path, 4096)
  if (filename !== undefined) portal.filename = filename
  const absPath = text(frame.abs_path, 4096)
  if (absPath !== undefined && absPath !== filename) portal.absPath = absPath
  const lineno = count(frame.lineno)
  if (lineno !== undefined) portal.lineno = lineno
  const colno = count(frame.colno)
  if (colno !== undefined) portal.colno = colno
  if (typeof frame.in_app === 'boolean') portal.inApp = frame.in_app
  return portal
}

/** A message event's stack (attachStacktrace): the event's own `stacktrace`, else its crashed or only thread's. */
function eventFrames(event: Json) {
  if (isPlainObject(event.stacktrace)) return portalFrames(event.stacktrace)
  const threads = isPlainObject(event.threads) ? event.threads.values : event.threads
  if (!Array.isArray(threads)) return []
  const candidates = threads.filter((thread): thread is Json => isPlainObject(thread) && isPlainObject(thread.stacktrace))
  const thread = candidates.find((candidate) => candidate.crashed === true) ?? candidates.find((candidate) => candidate.current === true) ?? (candidates.length === 1 ? candidates[0] : undefined)
  return thread ? portalFrames(thread.stacktrace) : []
}

/** What grouping reads of an exception's `mechanism`: its place in an exception group, and whether its type is made up. */
function mechanismOf(exception: Json): Json | undefined {
  const mechanism = exception.mechanism
  if (!isPlainObject(mechanism)) return undefined
  const id = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined)
  const picked = withoutUndefined({
    exceptionId: id(mechanism.exception_id),
    parentId: id(mechanism.parent_id),
    isExceptionGroup: mechanism.is_exception_group === true ? true : undefined,
    synthetic: mechanism.synthetic === true ? true : undefined,
    type: text(mechanism.type, 256),
    handled: typeof mechanism.handled === 'boolean' ? mechanism.handled : undefined,
  })
  return Object.keys(picked).length > 0 ? picked : undefined
}

/**
 * The exceptions of an event in every shape Sentry takes: `{ values: [...] }`, a list, or one
 * exception object; `values: null` or none means none. Anything else is dropped and named.
 */
function exceptionValues(event: Json, dropped: string[]): Json[] {
  const exception = event.exception
  if (exception === undefined || exception === null) return []
  let values: unknown
  if (Array.isArray(exception)) values = exception
  else if (isPlainObject(exception)) values = 'values' in exception ? exception.values : [exception]
  else {
    dropped.push(`exception: expected an object or a list, got ${kindOf(exception)}`)
    return []
  }
  if (values === null || values === undefined) return []
  if (!Array.isArray(values)) {
    dropped.push(`exception.values: expected a list, got ${kindOf(values)}`)
    return []
  }
  const exceptions: Json[] = []
  values.forEach((value, index) => {
    if (isPlainObject(value)) exceptions.push(value)
    else if (value !== null) dropped.push(`exception.values.${index}: expected an object, got ${kindOf(value)}`)
  })
  return exceptions
}

interface LogEntry {
  formatted: string
  /** the message before its parameters were put in, when it has parameters */
  template?: string
}

/**
 * Sentry's `logentry` (or its older name `message`): a string, or `{ message, params, formatted }`.
 * Without `formatted`, the parameters are put into the template as Sentry does (`%s` in order,
 * `%(name)s` by name); numbers and booleans count as text.
 */
function logEntryOf(event: Json, dropped: string[]): LogEntry | undefined {
  const field = event.logentry !== undefined && event.logentry !== null ? 'logentry' : 'message'
  const entry = event[field]
  if (entry === undefined || entry === null) return undefined
  const plain = lenientText(entry, 65_536)
  if (plain !== undefined) return plain === '' ? undefined : { formatted: plain }
  if (!isPlainObject(entry)) {
    dropped.push(`${field}: expected a string or an object, got ${kindOf(entry)}`)
    return undefined
  }
  const template = lenientText(entry.message, 65_536)
  const formatted = lenientText(entry.formatted, 65_536) ?? (template === undefined ? undefined : withParams(template, entry.params))
  if (formatted === undefined || formatted === '') {
    if (Object.keys(entry).length > 0) dropped.push(`${field}: holds neither message nor formatted text`)
    return undefined
  }
  return { formatted, template: template !== undefined && template !== formatted ? template : undefined }
}

function withParams(template: string, params: unknown): string {
  if (Array.isArray(params)) {
    let next = 0
    return template.replace(/%[sdif]|\{(\d+)\}/g, (placeholder, position: string | undefined) => {
      const value = position === undefined ? params[next++] : params[Number(position)]
      return value === undefined ? placeholder : typeof value === 'string' ? value : JSON.stringify(value)
    })
  }
  if (isPlainObject(params)) {
    return template.replace(/%\((\w+)\)[sdif]/g, (placeholder, name: string) => (name in params ? String(params[name]) : placeholder))
  }
  return template
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/** A text field Sentry reads leniently: a number or boolean counts as its text. */
function lenientText(value: unknown, max: number): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return text(value, max)
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

/** Sentry timestamps are seconds (a float) or RFC 3339 strings; one before 1970 or past year 9999 is none. */
function secondsToMs(value: unknown): number | undefined {
  const ms = typeof value === 'number' ? Math.round(value * 1000) : typeof value === 'string' ? Date.parse(value) : NaN
  return Number.isFinite(ms) && ms >= 0 && ms <= LATEST_MS ? ms : undefined
}

const LATEST_MS = Date.UTC(9999, 11, 31)

/** When it happened: a timestamp in the future, or none, is the time of receipt (Sentry corrects such clocks too). */
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
