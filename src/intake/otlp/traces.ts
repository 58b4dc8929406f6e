import { attributes, enumNumber, hexId, isoTime, nanosToMs, serviceNameOf, type KeyValue, type Resource, type Scope } from './values.ts'
import { emptyTranslation, type Translation } from './translation.ts'

interface SpanEvent {
  timeUnixNano?: unknown
  name?: string | null
  attributes?: KeyValue[] | null
}

interface SpanLink {
  traceId?: unknown
  spanId?: unknown
  attributes?: KeyValue[] | null
}

interface Span {
  traceId?: unknown
  spanId?: unknown
  parentSpanId?: unknown
  traceState?: string | null
  name?: string | null
  kind?: unknown
  startTimeUnixNano?: unknown
  endTimeUnixNano?: unknown
  attributes?: KeyValue[] | null
  events?: SpanEvent[] | null
  links?: SpanLink[] | null
  status?: { code?: unknown; message?: string | null } | null
}

export interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: Resource | null; scopeSpans?: { scope?: Scope | null; spans?: Span[] | null }[] | null }[] | null
}

const SPAN_KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'] as const
const KIND_NAMES = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer']
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'] as const
const STATUS_NAMES = ['unset', 'ok', 'error']

/**
 * Spans become `trace` events; span events named `exception` also become `error` events, grouped by
 * the errors module and linked to their trace and span.
 */
export function translateTraces(request: ExportTraceServiceRequest, receivedAt: number): Translation {
  const translation = emptyTranslation()
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes)
    const serviceName = serviceNameOf(resource)
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scope = scopeSpans.scope?.name || undefined
      for (const span of scopeSpans.spans ?? []) {
        const item = translation.items++
        const traceId = hexId(span.traceId)
        const spanId = hexId(span.spanId)
        const startMs = nanosToMs(span.startTimeUnixNano) ?? receivedAt
        const endMs = nanosToMs(span.endTimeUnixNano)
        const data: Record<string, unknown> = {}
        if (traceId !== undefined) data.traceId = traceId
        if (spanId !== undefined) data.spanId = spanId
        const parentSpanId = hexId(span.parentSpanId)
        if (parentSpanId !== undefined) data.parentSpanId = parentSpanId
        if (serviceName !== undefined) data.serviceName = serviceName
        if (span.name) data.name = span.name
        if (endMs !== undefined) data.durationMs = Math.max(0, Math.round((endMs - startMs) * 1000) / 1000)
        data.kind = KIND_NAMES[enumNumber(span.kind, SPAN_KINDS)] ?? 'unspecified'
        const statusCode = STATUS_NAMES[enumNumber(span.status?.code, STATUS_CODES)] ?? 'unset'
        data.status = span.status?.message ? { code: statusCode, message: span.status.message } : { code: statusCode }
        data.attributes = attributes(span.attributes)
        // The resource's attributes beyond its service name (deployment.environment, host.name, …): traces are searched by them.
        const { 'service.name': _serviceName, ...resourceRest } = resource
        if (Object.keys(resourceRest).length > 0) data.resource = resourceRest
        if (scope !== undefined) data.scope = scope
        if (span.traceState) data.traceState = span.traceState
        if (span.events?.length) data.events = span.events.map((event) => spanEvent(event, startMs))
        if (span.links?.length) data.links = span.links.map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId), attributes: attributes(link.attributes) }))
        translation.events.push({ type: 'trace', ts: isoTime(startMs), data })
        translation.itemOf.push(item)

        for (const event of span.events ?? []) {
          if (event.name !== 'exception') continue
          translation.events.push(exceptionEvent(event, startMs, data, serviceName))
          translation.itemOf.push(-1)
        }
      }
    }
  }
  return translation
}

function spanEvent(event: SpanEvent, spanStartMs: number) {
  return { name: event.name ?? '', ts: isoTime(nanosToMs(event.timeUnixNano) ?? spanStartMs), attributes: attributes(event.attributes) }
}

/** An `exception` span event (semantic conventions: exception.type, .message, .stacktrace) as an `error` event. */
function exceptionEvent(event: SpanEvent, spanStartMs: number, span: Record<string, unknown>, serviceName: string | undefined) {
  const { 'exception.type': type, 'exception.message': message, 'exception.stacktrace': stack, ...rest } = attributes(event.attributes)
  const data: Record<string, unknown> = {}
  if (typeof type === 'string' && type !== '') data.name = type
  if (typeof message === 'string') data.message = message
  if (typeof stack === 'string' && stack !== '') data.stack = stack
  if (serviceName !== undefined) data.service = serviceName
  if (span.traceId !== undefined) data.traceId = span.traceId
  if (span.spanId !== undefined) data.spanId = span.spanId
  if (span.name !== undefined) data.spanName = span.name
  if (Object.keys(rest).length > 0) data.attributes = rest
  return { type: 'error', ts: isoTime(nanosToMs(event.timeUnixNano) ?? spanStartMs), data }
}
