import { attributes, enumNumber, hexId, isoTime, nanosToMs, serviceNameOf, type KeyValue, type Resource, type Scope } from './values.ts'
import { emptyTranslation, type PortalEvent, isMessage, listAt, requireMessage, translateItem, type Translation } from './translation.ts'

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
  for (const [r, resourceSpans] of listAt(request.resourceSpans, 'resourceSpans').entries()) {
    if (!isMessage(resourceSpans)) continue
    const resource = attributes(resourceSpans.resource?.attributes)
    const serviceName = serviceNameOf(resource)
    for (const [s, scopeSpans] of listAt(resourceSpans.scopeSpans, `resourceSpans[${r}].scopeSpans`).entries()) {
      if (!isMessage(scopeSpans)) continue
      const scope = scopeSpans.scope?.name || undefined
      for (const span of listAt(scopeSpans.spans, `resourceSpans[${r}].scopeSpans[${s}].spans`)) {
        translateItem(translation, (item) => {
          requireMessage(span, 'span')
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
          if (typeof span.name === 'string' && span.name !== '') data.name = span.name
          if (endMs !== undefined) data.durationMs = Math.max(0, Math.round((endMs - startMs) * 1000) / 1000)
          data.kind = KIND_NAMES[enumNumber(span.kind, SPAN_KINDS)] ?? 'unspecified'
          const statusCode = STATUS_NAMES[enumNumber(span.status?.code, STATUS_CODES)] ?? 'unset'
          data.status = typeof span.status?.message === 'string' && span.status.message !== '' ? { code: statusCode, message: span.status.message } : { code: statusCode }
          data.attributes = attributes(span.attributes)
          // The resource's attributes beyond its service name (deployment.environment, host.name, …): traces are searched by them.
          const { 'service.name': _serviceName, ...resourceRest } = resource
          if (Object.keys(resourceRest).length > 0) data.resource = resourceRest
          if (scope !== undefined) data.scope = scope
          if (typeof span.traceState === 'string' && span.traceState !== '') data.traceState = span.traceState
          const events = listAt(span.events, 'events').filter(isMessage) as SpanEvent[]
          if (events.length) data.events = events.map((event) => spanEvent(event, startMs))
          const links = listAt(span.links, 'links').filter(isMessage) as SpanLink[]
          if (links.length) data.links = links.map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId), attributes: attributes(link.attributes) }))
          translation.events.push({ type: 'trace', ts: isoTime(startMs), data })
          translation.itemOf.push(item)

          for (const event of events) {
            if (event.name !== 'exception') continue
            translation.events.push(exceptionEvent(event, startMs, data, serviceName))
            translation.itemOf.push(-1)
          }
        })
      }
    }
  }
  return translation
}

function spanEvent(event: SpanEvent, spanStartMs: number) {
  return { name: typeof event.name === 'string' ? event.name : '', ts: isoTime(nanosToMs(event.timeUnixNano) ?? spanStartMs), attributes: attributes(event.attributes) }
}

/** An `exception` span event (semantic conventions: exception.type, .message, .stacktrace) as an `error` event. */
function exceptionEvent(event: SpanEvent, spanStartMs: number, span: Record<string, unknown>, serviceName: string | undefined) {
  const link = { traceId: span.traceId as string | undefined, spanId: span.spanId as string | undefined, serviceName, spanName: span.name as string | undefined }
  return exceptionOfAttributes(attributes(event.attributes), isoTime(nanosToMs(event.timeUnixNano) ?? spanStartMs), link) ?? { type: 'error', ts: isoTime(spanStartMs), data: withLink({}, link) }
}

interface ExceptionLink {
  traceId?: string
  spanId?: string
  serviceName?: string
  spanName?: string
}

/**
 * An exception described by attributes (semantic conventions: exception.type, .message, .stacktrace),
 * on a span event or a log record, as an `error` event; undefined when neither type nor message is set.
 * `reportedBy` lets the errors module store once an exception that a Sentry SDK reports for the same span.
 */
export function exceptionOfAttributes(all: Record<string, unknown>, ts: string, link: ExceptionLink): PortalEvent | undefined {
  const { 'exception.type': type, 'exception.message': message, 'exception.stacktrace': stack, ...rest } = all
  const data: Record<string, unknown> = {}
  if (typeof type === 'string' && type !== '') data.name = type
  if (typeof message === 'string') data.message = message
  if (data.name === undefined && data.message === undefined) return undefined
  if (typeof stack === 'string' && stack !== '') data.stack = stack
  if (Object.keys(rest).length > 0) data.attributes = rest
  return { type: 'error', ts, data: withLink(data, link) }
}

function withLink(data: Record<string, unknown>, link: ExceptionLink): Record<string, unknown> {
  if (link.serviceName !== undefined) data.service = link.serviceName
  if (link.traceId !== undefined) data.traceId = link.traceId
  if (link.spanId !== undefined) data.spanId = link.spanId
  if (link.spanName !== undefined) data.spanName = link.spanName
  data.reportedBy = 'opentelemetry'
  return data
}
