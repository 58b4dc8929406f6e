import { Type, type TSchema } from 'typebox'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { named } from './openapi-components.ts'
import { afterOwedAnswers } from './connections.ts'
import { PoolExhaustedError, StoreOutOfMemoryError, StoreUnavailableError } from '../storage/storage.ts'
import { countRefusal } from '../metrics/metrics.ts'

/** A failure with a stable `code`; the error handler turns it into an RFC 9457 problem response. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail)
  }
}

export const Problem = named(
  'Problem',
  Type.Object(
    {
      type: Type.String({ description: 'A URI naming the kind of problem; `about:blank` plus `code` for ours.' }),
      title: Type.String({ description: 'The HTTP status text.' }),
      status: Type.Integer({ description: 'The HTTP status code, repeated.' }),
      detail: Type.String({ description: 'What went wrong, naming the field or header at fault.' }),
      code: Type.String({ description: 'Stable snake_case word for programs; each response lists the values it can carry.' }),
    },
    {
      description: 'RFC 9457 problem details (application/problem+json).',
      examples: [{ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no project prj_01JD3Z8Q6R2N5M7K9P4TXYZABC', code: 'not_found' }],
    },
  ),
)

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'The request is malformed; `detail` names the field or parameter.',
  401: 'The bearer token is missing, unknown or revoked.',
  403: 'The token is valid but may not do this (viewer writing, API key reading, API key without the scope, bad signature).',
  404: 'No such resource in the caller’s organisation.',
  409: 'The request conflicts with one in flight.',
  413: 'The body is larger than the limit.',
  415: 'The body is of a media type (or Content-Encoding) the operation does not take: JSON operations take application/json only.',
  422: 'The request is well-formed but cannot be applied.',
  429: 'Rate limit reached; retry after `Retry-After` seconds.',
  431: 'The request line and headers are larger than 16 KiB; answered before routing, and the connection is closed.',
  503: 'The portal is overloaded (`overloaded`: its event loop lags, too many writes wait for their commit, no database connection came free within DATABASE_POOL_WAIT_MS, or the event store could not get the memory a query needs) or its database is unreachable (`database_unavailable`); retry after `Retry-After` seconds.',
}

const RETRY_AFTER = { 'Retry-After': { type: 'integer', minimum: 0, description: 'seconds to wait before retrying' } }

/** The response headers a problem of each status carries. */
const PROBLEM_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'WWW-Authenticate': { type: 'string', description: 'always `Bearer`: the credential this API takes', enum: ['Bearer'] } },
  429: {
    ...RETRY_AFTER,
    'RateLimit-Limit': { type: 'integer', description: 'the project’s limit, per second, of the bucket that refused the request' },
    'RateLimit-Remaining': { type: 'integer', description: 'what is left of it now' },
    'RateLimit-Reset': { type: 'integer', description: 'seconds until it is full again' },
  },
  503: RETRY_AFTER,
}

/**
 * Where each problem `code` can arise, so that every response of the document lists the codes it can
 * carry: `every` route that lists the status, routes that take a JSON `body`, routes with a `cursor`,
 * routes of an `access` (see auth.ts), or only the `route`s that name the code in `problemResponses`.
 */
export const PROBLEM_CODES: Record<string, { status: number; arises: 'every' | 'body' | 'cursor' | 'route' | `access:${string}` }> = {
  invalid_request: { status: 400, arises: 'every' },
  invalid_url: { status: 400, arises: 'every' },
  invalid_json: { status: 400, arises: 'body' },
  too_deep: { status: 400, arises: 'body' },
  invalid_content_length: { status: 400, arises: 'body' },
  invalid_cursor: { status: 400, arises: 'cursor' },
  invalid_idempotency_key: { status: 400, arises: 'route' },
  missing_events: { status: 400, arises: 'route' },
  invalid_gzip: { status: 400, arises: 'route' },
  invalid_otlp: { status: 400, arises: 'route' },
  invalid_protobuf: { status: 400, arises: 'route' },
  invalid_envelope: { status: 400, arises: 'route' },
  invalid_event: { status: 400, arises: 'route' },
  missing_token: { status: 401, arises: 'every' },
  invalid_token: { status: 401, arises: 'every' },
  access_token_required: { status: 403, arises: 'access:read,admin' },
  admin_required: { status: 403, arises: 'access:admin' },
  api_key_required: { status: 403, arises: 'access:apiKey' },
  install_admin_required: { status: 403, arises: 'route' },
  scope_required: { status: 403, arises: 'access:apiKey' },
  missing_signature: { status: 403, arises: 'route' },
  invalid_signature: { status: 403, arises: 'route' },
  not_found: { status: 404, arises: 'every' },
  idempotency_key_in_flight: { status: 409, arises: 'route' },
  endpoint_disabled: { status: 409, arises: 'route' },
  backup_unsupported: { status: 409, arises: 'route' },
  rule_name_taken: { status: 409, arises: 'route' },
  body_too_large: { status: 413, arises: 'body' },
  batch_too_large: { status: 413, arises: 'route' },
  unsupported_media_type: { status: 415, arises: 'body' },
  unsupported_content_encoding: { status: 415, arises: 'route' },
  other_project: { status: 422, arises: 'route' },
  not_in_group: { status: 422, arises: 'route' },
  last_fingerprint: { status: 422, arises: 'route' },
  endpoint_unavailable: { status: 422, arises: 'route' },
  rate_limited: { status: 429, arises: 'every' },
  headers_too_large: { status: 431, arises: 'every' },
  overloaded: { status: 503, arises: 'every' },
  database_unavailable: { status: 503, arises: 'every' },
  authorization_unavailable: { status: 503, arises: 'every' },
}

/** The key of a problem response entry holding the route-specific codes it names, read by the OpenAPI document. */
export const ROUTE_PROBLEM_CODES = 'x-problem-codes'

/**
 * OpenAPI response entries for the problems a route can return: statuses, and codes only this route
 * raises (their status is implied). The document adds the codes every route of that status can carry.
 */
export function problemResponses(...problems: (number | string)[]): Record<number, TSchema> {
  const codesByStatus = new Map<number, string[]>()
  for (const problem of problems) {
    const status = typeof problem === 'number' ? problem : (PROBLEM_CODES[problem]?.status ?? 400)
    const codes = codesByStatus.get(status) ?? []
    if (typeof problem === 'string') codes.push(problem)
    codesByStatus.set(status, codes)
  }
  const responses: Record<number, TSchema> = {}
  for (const [status, codes] of codesByStatus) {
    responses[status] = {
      description: DESCRIPTIONS[status] ?? TITLES[status] ?? 'Problem',
      ...(PROBLEM_HEADERS[status] && { headers: PROBLEM_HEADERS[status] }),
      content: { 'application/problem+json': { schema: Problem } },
      [ROUTE_PROBLEM_CODES]: codes,
    } as unknown as TSchema
  }
  return responses
}

/** The HTTP status text a problem of `status` carries as its `title`. */
export function problemTitle(status: number): string {
  return TITLES[status] ?? 'Error'
}

export function sendProblem(reply: FastifyReply, status: number, code: string, detail: string, headers: Record<string, string> = {}) {
  countRefusal(status, code)
  return reply
    .code(status)
    .headers(headers)
    .type('application/problem+json')
    .send({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code })
}

const FASTIFY_CODES: Record<string, [number, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'body_too_large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_content_length'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_BAD_URL: [400, 'invalid_url'],
}

/** Turns every error into a problem response; `isUnavailable` tells database outages (503) from bugs (500). */
export function problemErrorHandler(isUnavailable: (error: unknown) => boolean) {
  return function handleError(this: unknown, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (error instanceof ProblemError) return sendProblem(reply, error.status, error.code, error.detail, error.headers)
    // The client hung up (say, while its body was being read): there is no one to answer, so no answer
    // is written. An ECONNRESET from the database is not this: its client is still waiting for a 503.
    if (request.raw.aborted || request.raw.socket?.destroyed) {
      reply.hijack()
      return void request.raw.destroy()
    }
    if (error.validation) return sendProblem(reply, 400, validationCode(error), validationDetail(error))
    const known = error.code ? FASTIFY_CODES[error.code] : undefined
    if (known) return sendProblem(reply, known[0], known[1], error.message)
    if (error instanceof SyntaxError) return sendProblem(reply, 400, 'invalid_json', `body is not valid JSON: ${error.message}`)
    if (error instanceof PoolExhaustedError) {
      request.log.warn({ pool: error.pool, waitedMs: error.waitedMs }, 'database pool exhausted')
      return sendProblem(reply, 503, 'overloaded', `${error.message}: the portal has more work than connections; retry shortly`, { 'retry-after': '1' })
    }
    if (error instanceof StoreOutOfMemoryError) {
      request.log.warn({ reason: error.message }, 'event store out of memory')
      return sendProblem(reply, 503, 'overloaded', `${error.message}; retry shortly`, { 'retry-after': '1' })
    }
    if (isUnavailable(error)) {
      // One line a refused request, without its stack: an outage refuses every request, and the store logs the outage itself.
      request.log.warn({ reason: error.message, code: error.code }, 'database unavailable')
      const detail = error instanceof StoreUnavailableError ? `the event store cannot be read or written now (${error.reason})` : 'the database cannot be reached or refuses writes'
      return sendProblem(reply, 503, 'database_unavailable', `${detail}; retry shortly`, { 'retry-after': '5' })
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) return sendProblem(reply, status, snakeCode(error.code, status), error.message)
    request.log.error({ err: error }, 'unhandled error')
    return sendProblem(reply, 500, 'internal_error', 'an unexpected error occurred; it has been logged')
  }
}

/** Sockets already given their closing answer: a parser in error reports every later chunk again. */
const answeredClientErrors = new WeakSet<Duplex>()

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (headers over 16 KiB, a
 * malformed request line, a request that took too long): they get a problem body too, and the
 * connection is closed, since the parser cannot go on reading it. Requests read in full before the
 * bad one (pipelined in the same write) get their answers first.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex) {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy()
  if (answeredClientErrors.has(socket)) return
  answeredClientErrors.add(socket)
  const [status, code, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'the request line and headers together are larger than 16 KiB']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request was not received in time']
        : [400, 'malformed_request', 'the request is not valid HTTP/1.1']
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status], status, detail, code })
  afterOwedAnswers(socket as Socket, () => {
    if (!socket.writable) return void socket.destroy()
    socket.end(
      `HTTP/1.1 ${status} ${TITLES[status]}\r\nconnection: close\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    // A client that never reads its answer must not hold the descriptor: the socket goes once the answer is out, or at once if it cannot be.
    socket.once('finish', () => socket.destroy())
  })
}

// A malformed idempotency key is refused with the same code whether its route's schema or its handler finds it.
function validationCode(error: FastifyError): string {
  const first = error.validation?.[0]
  return error.validationContext === 'headers' && first?.instancePath === '/x-service-idempotency-key' ? 'invalid_idempotency_key' : 'invalid_request'
}

function validationDetail(error: FastifyError): string {
  const first = error.validation?.[0]
  if (!first) return error.message
  const where = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body')
  const params = first.params as Record<string, unknown>
  const segments = first.instancePath.split('/').filter(Boolean)
  if (first.keyword === 'required') segments.push(String(params.missingProperty))
  if (first.keyword === 'additionalProperties') return `${[where, ...segments, params.additionalProperty].join('.')}: is not a known field`
  const field = segments.length ? [where, ...segments].join('.') : where
  const problem = first.keyword === 'required' ? 'required' : (first.message ?? 'is invalid')
  return `${field}: ${problem}`
}

function snakeCode(code: string | undefined, status: number): string {
  if (!code) return `http_${status}`
  return code.replace(/^FST_ERR_/, '').toLowerCase()
}
