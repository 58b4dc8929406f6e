import { Type, type TSchema } from 'typebox'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
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

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the kind of problem; `about:blank` plus `code` for ours.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'What went wrong, naming the field or header at fault.' }),
    code: Type.String({ description: 'Stable snake_case word for programs: invalid_signature, rate_limited, not_found, …' }),
  },
  { description: 'RFC 9457 problem details (application/problem+json).' },
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
  403: 'The token is valid but may not do this (viewer writing, API key reading, bad signature).',
  404: 'No such resource in the caller’s organisation.',
  409: 'The request conflicts with one in flight.',
  413: 'The body is larger than the limit.',
  415: 'The body is not application/json.',
  422: 'The request is well-formed but cannot be applied.',
  429: 'Rate limit reached; retry after `Retry-After` seconds.',
  431: 'The request line and headers are larger than 16 KiB; answered before routing, and the connection is closed.',
  503: 'The portal is shedding load or its database is unreachable; retry after `Retry-After` seconds.',
}

/** OpenAPI response entries for the problem statuses a route can return. */
export function problemResponses(...statuses: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {}
  for (const status of statuses) {
    responses[status] = {
      description: DESCRIPTIONS[status] ?? TITLES[status] ?? 'Problem',
      content: { 'application/problem+json': { schema: Problem } },
    } as unknown as TSchema
  }
  return responses
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
    if (error.validation) return sendProblem(reply, 400, 'invalid_request', validationDetail(error))
    const known = error.code ? FASTIFY_CODES[error.code] : undefined
    if (known) return sendProblem(reply, known[0], known[1], error.message)
    if (error instanceof SyntaxError) return sendProblem(reply, 400, 'invalid_json', `body is not valid JSON: ${error.message}`)
    if (isUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable')
      return sendProblem(reply, 503, 'database_unavailable', 'the database cannot be reached or refuses writes; retry shortly', { 'retry-after': '5' })
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) return sendProblem(reply, status, snakeCode(error.code, status), error.message)
    request.log.error({ err: error }, 'unhandled error')
    return sendProblem(reply, 500, 'internal_error', 'an unexpected error occurred; it has been logged')
  }
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (headers over 16 KiB, a
 * malformed request line, a request that took too long): they get a problem body too, and the
 * connection is closed, since the parser cannot go on reading it.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex) {
  if (error.code === 'ECONNRESET' || !socket.writable) return
  const [status, code, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'the request line and headers together are larger than 16 KiB']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request was not received in time']
        : [400, 'malformed_request', 'the request is not valid HTTP/1.1']
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status], status, detail, code })
  socket.end(
    `HTTP/1.1 ${status} ${TITLES[status]}\r\nconnection: close\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
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
