// What an attempt sends and what it records, apart from the sending (send-attempt.ts), which loads undici:
// the dispatcher prepares requests where undici is not loaded (it is imported when the dispatcher starts),
// and the ingest writer's thread, which reaches this code through the registry, never loads it.
import { createHash } from 'node:crypto'
import type { AttemptOutcome } from './tables.ts'

const USER_AGENT = 'observability-portal-webhooks/0.1'

export interface AttemptRequest {
  url: string
  method: 'POST'
  headers: Record<string, string>
  bodySize: number
  bodySha256: string
}

interface AttemptResponse {
  statusCode: number
  headers: Record<string, string>
  /** the first 4 KiB of the body, as text */
  body: string
}

/** What one HTTP attempt did; `retryAfterMs` is the receiver's Retry-After on a 429 or 503. */
export interface AttemptResult {
  status: AttemptOutcome
  startedAt: number
  durationMs: number
  request: AttemptRequest
  response: AttemptResponse | null
  error: string | null
  retryAfterMs: number | null
}

/** A request ready to leave: what the attempt row records of it, and the bytes to send. */
export interface PreparedRequest {
  record: AttemptRequest
  body: string
}

/** The POST an attempt sends, with its headers as recorded; built before the attempt row is written. */
export function prepareRequest(url: string, headers: Record<string, string>, body: string): PreparedRequest {
  const allHeaders = { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers }
  return {
    record: { url, method: 'POST', headers: allHeaders, bodySize: Buffer.byteLength(body), bodySha256: createHash('sha256').update(body).digest('hex') },
    body,
  }
}

