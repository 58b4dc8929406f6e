export interface RetryPolicy {
  /** retries of one batch before it is given up (and counted as dropped) */
  maxRetries: number
  /** the first backoff; it doubles on each retry */
  minDelayMs: number
  /** the ceiling of the doubling; a longer `Retry-After` from the portal still wins */
  maxDelayMs: number
}

/** Milliseconds to wait before retry number `retry` (from 0): the backoff, or the portal's `Retry-After` when longer. */
export function retryDelay(policy: RetryPolicy, retry: number, retryAfterMs: number | undefined): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** retry)
  // Equal jitter: half fixed so that retries never bunch at zero, half random so that clients spread out.
  const backoffMs = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
  return Math.max(backoffMs, retryAfterMs ?? 0)
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000
  const date = Date.parse(header)
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined
}
