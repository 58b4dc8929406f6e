import { Type, type Static } from 'typebox'
import { nestedDeeperThan } from '../http/json-body.ts'
import { ProblemError } from '../http/problem.ts'
import { named } from '../http/openapi-components.ts'
import { newId } from '../ids.ts'
import type { StoredEvent } from '../modules/module.ts'
import { computeGrouping, type ExceptionInput, type ExceptionMechanism } from './fingerprint.ts'
import type { Occurrence } from './group-store.ts'
import { ErrorFrame, type ErrorPayload } from './payload.ts'
import { Breadcrumbs, occurrenceContext } from './occurrence-context.ts'
import { isInApp, parseStackTrace, type Frame } from './stack-trace.ts'

const Label = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 256, description }))

export const CaptureFrame = ErrorFrame

export const CaptureBody = named('CaptureRequest', Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 512, description: 'exception name, e.g. TypeError' }),
    message: Type.String({ maxLength: 16_384 }),
    stack: Type.Optional(
      Type.String({ maxLength: 262_144, description: 'a stack trace as printed by V8/Node, CPython or the JVM (also SpiderMonkey/JavaScriptCore)' }),
    ),
    frames: Type.Optional(
      Type.Array(CaptureFrame, { maxItems: 1000, description: 'structured frames, innermost (the one that threw) first; when not empty, used instead of `stack` for grouping' }),
    ),
    release: Label('the release that raised it'),
    environment: Label('e.g. production'),
    service: Label('the service that raised it'),
    request: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'request context (method, url, headers, …); Authorization, Cookie and API-key headers are stored as [filtered]',
      }),
    ),
    timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'when it happened; default and upper bound: the time it is received' })),
    fingerprint: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
        minItems: 1,
        maxItems: 32,
        description: 'overrides grouping: occurrences with the same array share a group; `{{ default }}` stands for the computed fingerprint',
      }),
    ),
    breadcrumbs: Type.Optional(Breadcrumbs),
    tags: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'counted per group as facets (keys up to 32 characters, text values up to 200); kept in `metadata.tags`' })),
    user: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'who it affected: `id`, `email` or `ip_address` counts towards the group’s users affected; kept in `metadata.user`' })),
  },
  {
    additionalProperties: true,
    description: 'Fields not listed here are kept in the occurrence’s `metadata`.',
    examples: [
      {
        name: 'TypeError',
        message: "Cannot read properties of undefined (reading 'total')",
        stack: "TypeError: Cannot read properties of undefined (reading 'total')\n    at checkout (/app/src/cart.js:42:17)\n    at main (/app/src/index.js:7:3)",
        release: '1.2.3',
        environment: 'production',
        service: 'checkout-api',
      },
    ],
  },
))

export type CaptureBody = Static<typeof CaptureBody>

export const CaptureResponse = named('CaptureResponse', Type.Object({
  id: Type.String({ description: 'the occurrence id (occ_…)' }),
  fingerprint: Type.String({ description: 'hex SHA-256 fingerprint computed for this occurrence', examples: ['3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718'] }),
  groupFingerprint: Type.String({ description: 'the fingerprint its group is known by (differs after a merge)', examples: ['3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718'] }),
  isNewGroup: Type.Boolean({ description: 'true when this occurrence opened its group' }),
}, { description: 'The occurrence recorded and the group it joined.' }))

const CAPTURE_FIELDS = new Set(Object.keys(CaptureBody.properties).filter((field) => field !== 'tags' && field !== 'user'))
const EVENT_FIELDS = new Set(['name', 'message', 'release', 'environment', 'service', 'stack', 'frames', 'request', 'fingerprint', 'breadcrumbs'])
const MAX_DEPTH = 32
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token)$/i

/** An occurrence from `POST /api/errors/capture`. */
export function occurrenceFromCapture(projectId: string, body: CaptureBody, receivedAt: number): Occurrence {
  if (nestedDeeperThan(body, MAX_DEPTH)) throw new ProblemError(400, 'too_deep', `body: is nested more than ${MAX_DEPTH} levels deep`)
  const frames = body.frames?.length ? body.frames.map(structuredFrame) : null
  return {
    id: newId('occ', receivedAt),
    projectId,
    ts: Math.min(body.timestamp === undefined ? receivedAt : Date.parse(body.timestamp), receivedAt),
    receivedAt,
    name: body.name,
    message: body.message,
    stack: body.stack ?? null,
    frames,
    release: body.release ?? null,
    environment: body.environment ?? null,
    service: body.service ?? null,
    request: body.request ? withoutSecretHeaders(body.request) : null,
    metadata: fieldsOutside(body, CAPTURE_FIELDS),
    ...occurrenceContext(body),
    grouping: computeGrouping(projectId, {
      name: body.name,
      message: body.message,
      frames: frames ?? (body.stack ? parseStackTrace(body.stack) : []),
      override: body.fingerprint,
      // Fields kept in metadata that the fingerprint variables {{ level }}, {{ transaction }} and {{ tags.NAME }} read.
      level: stringField(body, 'level'),
      transaction: stringField(body, 'transaction'),
      tags: isRecord((body as Record<string, unknown>).tags) ? ((body as Record<string, unknown>).tags as Record<string, unknown>) : undefined,
    }),
  }
}

/**
 * An occurrence from an `error` event (ingest, OTLP exception span events, Sentry): its structured
 * frames group it, else its printed stack, else its name and message — the same rules as a capture.
 */
export function occurrenceFromEvent(event: StoredEvent<Static<typeof ErrorPayload>>): Occurrence {
  // No U+0000 to replace: an event holding one was refused (PostgreSQL) or stored as is (SQLite) by ingest already.
  const data = event.data as Record<string, unknown>
  const name = typeof data.name === 'string' ? data.name : ''
  const message = typeof data.message === 'string' ? data.message : ''
  const label = (key: string) => (typeof data[key] === 'string' && data[key] !== '' ? (data[key] as string) : null)
  const stack = label('stack')
  const frames = Array.isArray(data.frames) && data.frames.length > 0 ? (data.frames as Static<typeof ErrorFrame>[]).map(structuredFrame) : null
  const request = typeof data.request === 'object' && data.request !== null ? (data.request as Record<string, unknown>) : null
  return {
    id: event.id,
    projectId: event.projectId,
    ts: Math.min(event.ts, event.receivedAt),
    receivedAt: event.receivedAt,
    name,
    message,
    stack,
    frames,
    release: label('release'),
    environment: label('environment'),
    service: label('service'),
    request: request && withoutSecretHeaders(request),
    metadata: fieldsOutside(data, EVENT_FIELDS),
    ...occurrenceContext(data),
    grouping: computeGrouping(event.projectId, {
      name,
      message,
      frames: frames ?? (stack ? parseStackTrace(stack) : []),
      override: data.fingerprint as string[] | undefined,
      chain: chainOf(data, name, message, frames),
      mechanism: mechanismOf(data.mechanism),
      isMessage: name === '',
      messageTemplate: label('messageTemplate') ?? undefined,
      platform: label('platform') ?? undefined,
      level: label('level') ?? undefined,
      transaction: label('transaction') ?? undefined,
      tags: isRecord(data.tags) ? data.tags : undefined,
    }),
  }
}

/**
 * The whole chain, oldest first, when an event names the exceptions before the thrown one
 * (`chained`, as the Sentry receiver writes it); undefined otherwise.
 */
function chainOf(data: Record<string, unknown>, name: string, message: string, frames: Frame[] | null): ExceptionInput[] | undefined {
  if (!Array.isArray(data.chained) || data.chained.length === 0) return undefined
  const earlier = data.chained.filter(isRecord).map((exception) => ({
    type: typeof exception.type === 'string' ? exception.type : '',
    value: typeof exception.value === 'string' ? exception.value : '',
    frames: Array.isArray(exception.frames) ? exception.frames.filter(isRecord).map((frame) => structuredFrame(frame as Static<typeof ErrorFrame>)) : [],
    mechanism: mechanismOf(exception.mechanism),
  }))
  return [...earlier, { type: name, value: message, frames: frames ?? [], mechanism: mechanismOf(data.mechanism) }]
}

function mechanismOf(value: unknown): ExceptionMechanism | undefined {
  if (!isRecord(value)) return undefined
  const id = (key: string) => (typeof value[key] === 'number' && Number.isInteger(value[key]) ? (value[key] as number) : undefined)
  return { exceptionId: id('exceptionId'), parentId: id('parentId'), isExceptionGroup: value.isExceptionGroup === true, synthetic: value.synthetic === true }
}

function stringField(body: Record<string, unknown>, key: string): string | undefined {
  return typeof body[key] === 'string' ? body[key] : undefined
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function structuredFrame(frame: Static<typeof ErrorFrame>): Frame {
  // Literals, not spreads: spreading a frame cost a third of turning an event into an occurrence.
  const fn = frame.function ?? null
  const module = frame.module ?? null
  const filename = frame.filename ?? null
  const lineno = frame.lineno ?? null
  const colno = frame.colno ?? null
  const inApp = frame.inApp ?? isInApp({ module, filename })
  return frame.absPath === undefined
    ? { function: fn, module, filename, lineno, colno, inApp }
    : { function: fn, module, filename, lineno, colno, absPath: frame.absPath, inApp }
}

function fieldsOutside(body: Record<string, unknown>, known: Set<string>): Record<string, unknown> {
  const outside: Record<string, unknown> = {}
  for (const key of Object.keys(body)) {
    if (known.has(key)) continue
    // an own `__proto__` (JSON.parse makes one) stays data, as Object.fromEntries kept it
    if (key === '__proto__') Object.defineProperty(outside, key, { value: body[key], enumerable: true, writable: true, configurable: true })
    else outside[key] = body[key]
  }
  return outside
}

/** The request context with credential headers replaced by [filtered], as captures and receivers store it. */
export function withoutSecretHeaders(request: Record<string, unknown>): Record<string, unknown> {
  const headers = request.headers
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return request
  const filtered = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, SECRET_HEADERS.test(key) ? '[filtered]' : value]))
  // Copied, then set: a literal spreading `request` before `headers` costs V8 over a microsecond.
  const copy = { ...request }
  copy.headers = filtered
  return copy
}
