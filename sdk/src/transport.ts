import { createHmac } from 'node:crypto'
import { parseRetryAfter } from './retry.js'

export const SDK_VERSION = '0.1.0'
const USER_AGENT = `observability-portal-sdk/${SDK_VERSION} node/${process.versions.node}`

export interface Connection {
  baseUrl: string
  apiKey: string
  webhookSecret: string
  timeoutMs: number
}

export interface Rejection {
  index: number
  reason: string
}

/** What one POST of a batch came to, and so what the client does next. */
export type BatchOutcome =
  | { kind: 'delivered'; accepted: number; rejected: Rejection[]; replayed: boolean }
  /** network error, timeout, 408, 409 (same key still in flight), 429 or 5xx: send the same bytes again */
  | { kind: 'retry'; why: string; retryAfterMs: number | undefined }
  /** 413: the batch is larger than this portal takes */
  | { kind: 'too-large'; why: string }
  /** 401 or 403: the credentials are wrong; sending more cannot help */
  | { kind: 'refused'; status: number; why: string }
  /** any other answer: this batch cannot succeed as it is */
  | { kind: 'failed'; status: number; why: string }

/** Spec 5.3: the bare lower-case hex HMAC-SHA256 of the exact body bytes, keyed with the webhook secret. */
export function signBody(webhookSecret: string, body: string): string {
  return createHmac('sha256', webhookSecret).update(body).digest('hex')
}

export async function postBatch(connection: Connection, body: string, idempotencyKey: string): Promise<BatchOutcome> {
  let response: Response
  try {
    response = await fetch(`${connection.baseUrl}/api/ingest`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${connection.apiKey}`,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-signature': signBody(connection.webhookSecret, body),
        'x-service-idempotency-key': idempotencyKey,
      },
      body,
      signal: AbortSignal.timeout(connection.timeoutMs),
    })
  } catch (error) {
    return { kind: 'retry', why: networkFailure(error), retryAfterMs: undefined }
  }
  return batchOutcome(response)
}

async function batchOutcome(response: Response): Promise<BatchOutcome> {
  const text = await response.text().catch(() => '')
  const status = response.status
  if (status === 200) {
    const body = parseJson(text) as { accepted?: unknown; rejected?: Rejection[] } | undefined
    // A 200 that is not the portal's answer (a proxy's page): the idempotency key makes sending again safe.
    if (typeof body?.accepted !== 'number' || !Array.isArray(body.rejected)) return { kind: 'retry', why: '200 without an ingest answer', retryAfterMs: undefined }
    return { kind: 'delivered', accepted: body.accepted, rejected: body.rejected, replayed: response.headers.get('idempotent-replayed') === 'true' }
  }
  const why = `${status} ${problemDetail(text)}`
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    return { kind: 'retry', why, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) }
  }
  if (status === 413) return { kind: 'too-large', why }
  if (status === 401 || status === 403) return { kind: 'refused', status, why }
  return { kind: 'failed', status, why }
}

export type CaptureOutcome =
  | { kind: 'captured'; result: CaptureResult }
  /** the portal certainly did not store it (connection refused, 429, 503): safe to send again */
  | { kind: 'retry'; why: string; retryAfterMs: number | undefined }
  | { kind: 'failed'; status: number | undefined; why: string }

/** The errors module's answer to a capture (DESIGN: Errors module). */
export interface CaptureResult {
  id: string
  fingerprint: string
  isNewGroup: boolean
}

/** `POST /api/errors/capture`: the API key as bearer; not signed (DESIGN: Errors module). */
export async function postCapture(connection: Connection, body: string, idempotencyKey: string): Promise<CaptureOutcome> {
  let response: Response
  try {
    response = await fetch(`${connection.baseUrl}/api/errors/capture`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${connection.apiKey}`,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-idempotency-key': idempotencyKey,
      },
      body,
      signal: AbortSignal.timeout(connection.timeoutMs),
    })
  } catch (error) {
    // Stored or not, sending again is safe: a capture the portal already has is answered from its idempotency key.
    return { kind: 'retry', why: networkFailure(error), retryAfterMs: undefined }
  }
  const text = await response.text().catch(() => '')
  if (response.status === 201 || response.status === 200) return { kind: 'captured', result: JSON.parse(text) as CaptureResult }
  const why = `${response.status} ${problemDetail(text)}`
  if (response.status === 408 || response.status === 409 || response.status === 429 || response.status >= 500) {
    return { kind: 'retry', why, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) }
  }
  return { kind: 'failed', status: response.status, why }
}

/** What `GET /api/health` said: whether the portal reaches its database and token store. */
export interface PingResult {
  ok: boolean
  /** the HTTP status; undefined when the portal could not be reached */
  status: number | undefined
  latencyMs: number
  /** the health body, or why there is none */
  detail: unknown
}

export async function getHealth(connection: Connection): Promise<PingResult> {
  const started = performance.now()
  const latency = () => Math.round((performance.now() - started) * 100) / 100
  try {
    const response = await fetch(`${connection.baseUrl}/api/health`, {
      headers: { 'user-agent': USER_AGENT },
      signal: AbortSignal.timeout(connection.timeoutMs),
    })
    const text = await response.text()
    const body = parseJson(text)
    const ok = response.status === 200 && (body as { status?: unknown } | undefined)?.status === 'ok'
    return { ok, status: response.status, latencyMs: latency(), detail: body ?? text }
  } catch (error) {
    return { ok: false, status: undefined, latencyMs: latency(), detail: networkFailure(error) }
  }
}

/** The problem `detail` (RFC 9457) when the body is one, else the start of the body. */
function problemDetail(text: string): string {
  const body = parseJson(text) as { detail?: unknown } | undefined
  return typeof body?.detail === 'string' ? body.detail : text.slice(0, 200)
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

// fetch() says only "fetch failed"; the cause says why (ECONNREFUSED, ECONNRESET, …).
function networkFailure(error: unknown): string {
  if ((error as Error).name === 'TimeoutError') return 'no answer within the timeout'
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
  if (cause?.code) return `network error ${String(cause.code)}`
  return `network error: ${String(cause?.message ?? (error as Error).message)}`
}
