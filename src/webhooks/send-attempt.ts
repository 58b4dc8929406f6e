import { errors, request, type Agent } from 'undici'
import { isRefusedAddress } from './address-guard.ts'
import type { AttemptResult, PreparedRequest } from './attempt-request.ts'
import type { AttemptOutcome } from './tables.ts'

const RESPONSE_BODY_LIMIT = 4096

/** Sends one prepared POST; never throws: every way it can end is an attempt status. Redirects are not followed. */
export async function sendAttempt(agent: Agent, prepared: PreparedRequest, timeoutMs: number): Promise<AttemptResult> {
  const { record: requestRecord, body } = prepared
  const { url, headers: allHeaders } = requestRecord
  const startedAt = Date.now()
  const done = (fields: Pick<AttemptResult, 'status' | 'response' | 'error' | 'retryAfterMs'>): AttemptResult => ({
    ...fields,
    startedAt,
    durationMs: Date.now() - startedAt,
    request: requestRecord,
  })
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    const answer = await request(url, { method: 'POST', headers: allHeaders, body, dispatcher: agent, signal })
    const response = { statusCode: answer.statusCode, headers: flatHeaders(answer.headers), body: await readPrefix(answer.body) }
    const succeeded = answer.statusCode >= 200 && answer.statusCode < 300
    return done({
      status: succeeded ? 'succeeded' : 'failed',
      response,
      error: succeeded ? null : `the endpoint answered ${answer.statusCode}`,
      retryAfterMs: answer.statusCode === 429 || answer.statusCode === 503 ? retryAfterMs(response.headers['retry-after']) : null,
    })
  } catch (error) {
    return done({ status: failureStatus(error, signal), response: null, error: errorText(error, timeoutMs, signal), retryAfterMs: null })
  }
}

function failureStatus(error: unknown, signal: AbortSignal): AttemptOutcome {
  if (isRefusedAddress(error) || isRefusedAddress((error as { cause?: unknown })?.cause)) return 'refused'
  if (signal.aborted || error instanceof errors.ConnectTimeoutError || error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError) {
    return 'timeout'
  }
  return 'network_error'
}

function errorText(error: unknown, timeoutMs: number, signal: AbortSignal): string {
  if (signal.aborted) return `no complete answer within WEBHOOK_TIMEOUT_MS (${timeoutMs} ms)`
  const cause = (error as { cause?: { message?: string; code?: string } })?.cause
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: string })?.code ?? cause?.code
  return [code, message, cause?.message].filter(Boolean).join(': ')
}

async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= RESPONSE_BODY_LIMIT) {
      // The rest is not kept; closing here spares reading a large body to its end.
      body.destroy()
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8')
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value
  return flat
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now; null when absent or unreadable. */
function retryAfterMs(value: string | undefined): number | null {
  if (value === undefined) return null
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now())
}
