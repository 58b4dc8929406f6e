import { createRequire } from 'node:module'
import { nanosString } from '../durations.ts'
import type { SpanRow } from './span-rows.ts'
import { traceService } from '../../intake/otlp/proto.ts'

const require = createRequire(import.meta.url)
/** The official OTLP messages (src/intake/otlp/proto.ts): TracesData, Tempo's `Trace` and the export request share one wire format. */
const ExportTraceServiceRequest = traceService.request
const { Writer } = require('protobufjs/minimal') as { Writer: { create(): { uint32(value: number): { bytes(value: Uint8Array): { finish(): Uint8Array } } } } }

const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer']
const STATUS_CODES = ['unset', 'ok', 'error']

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: AnyValue[] } } | { kvlistValue: { values: KeyValue[] } }
interface KeyValue {
  key: string
  value: AnyValue
}

function anyValue(value: unknown): AnyValue {
  if (typeof value === 'string') return { stringValue: value }
  if (typeof value === 'boolean') return { boolValue: value }
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value }
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } }
  if (typeof value === 'object' && value !== null) return { kvlistValue: { values: keyValues(value as Record<string, unknown>) } }
  return { stringValue: value === null || value === undefined ? '' : String(value) }
}

function keyValues(object: unknown): KeyValue[] {
  if (typeof object !== 'object' || object === null) return []
  return Object.entries(object as Record<string, unknown>).map(([key, value]) => ({ key, value: anyValue(value) }))
}

const nanosOf = (iso: unknown, fallbackMs: number) => nanosString(typeof iso === 'string' && !Number.isNaN(Date.parse(iso)) ? Date.parse(iso) : fallbackMs)

/**
 * The spans of a trace as OTLP resource spans (OTLP/JSON's shape: ids in hex, 64-bit numbers as strings), one
 * resource per service and one scope per instrumentation scope. Stored spans keep the service name of their
 * resource, not its other attributes.
 */
export function resourceSpans(spans: SpanRow[]) {
  const byService = new Map<string, Map<string, SpanRow[]>>()
  for (const span of spans) {
    const service = span.serviceName ?? ''
    const scopes = byService.get(service) ?? new Map<string, SpanRow[]>()
    const scope = typeof span.data.scope === 'string' ? span.data.scope : ''
    scopes.set(scope, [...(scopes.get(scope) ?? []), span])
    byService.set(service, scopes)
  }
  return [...byService].map(([service, scopes]) => ({
    resource: { attributes: service === '' ? [] : [{ key: 'service.name', value: { stringValue: service } }] },
    scopeSpans: [...scopes].map(([scope, members]) => ({ scope: { name: scope }, spans: members.map(otlpSpan) })),
  }))
}

function otlpSpan(span: SpanRow) {
  const status = (span.data.status ?? {}) as { code?: string; message?: string }
  const events = Array.isArray(span.data.events) ? (span.data.events as { name?: string; ts?: string; attributes?: unknown }[]) : []
  const links = Array.isArray(span.data.links) ? (span.data.links as { traceId?: string; spanId?: string; attributes?: unknown }[]) : []
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
    ...(typeof span.data.traceState === 'string' ? { traceState: span.data.traceState } : {}),
    name: span.name ?? '',
    kind: Math.max(0, SPAN_KINDS.indexOf(String(span.data.kind ?? 'unspecified'))),
    startTimeUnixNano: nanosString(span.ts),
    endTimeUnixNano: nanosString(span.ts + (span.durationMs ?? 0)),
    attributes: keyValues(span.data.attributes),
    events: events.map((event) => ({ timeUnixNano: nanosOf(event.ts, span.ts), name: event.name ?? '', attributes: keyValues(event.attributes) })),
    links: links.map((link) => ({ traceId: link.traceId ?? '', spanId: link.spanId ?? '', attributes: keyValues(link.attributes) })),
    status: { code: Math.max(0, STATUS_CODES.indexOf(status.code ?? 'unset')), ...(status.message ? { message: status.message } : {}) },
  }
}

const IDS = new Set(['traceId', 'spanId', 'parentSpanId'])

/** OTLP/JSON's hex ids as the bytes protobuf carries (a stored id that is not hex is kept as its text's bytes). */
function withIdBytes(value: unknown, key = ''): unknown {
  if (IDS.has(key) && typeof value === 'string') return /^([0-9a-f]{2})+$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value)
  if (Array.isArray(value)) return value.map((item) => withIdBytes(item))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, withIdBytes(item, name)]))
  return value
}

/** OTLP `TracesData` bytes: the body of Tempo's v1 trace by id (its `Trace` message) in protobuf. */
export function tracesDataProtobuf(spans: SpanRow[]): Uint8Array {
  return ExportTraceServiceRequest.encode(withIdBytes({ resourceSpans: resourceSpans(spans) })).finish()
}

/** Tempo's v2 `TraceByIDResponse` in protobuf: the trace as its field 1. */
export function traceByIdResponseProtobuf(spans: SpanRow[]): Uint8Array {
  return Writer.create().uint32((1 << 3) | 2).bytes(tracesDataProtobuf(spans)).finish()
}
