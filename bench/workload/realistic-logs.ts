// The realistic log workload every ingest and event-store bench sends: what a service's logs look like,
// not one body repeated. Events spread over the last 7 days in time order; levels 85 % info, 10 % warn,
// 5 % error; one of ten modules; a message from one of seven templates with its variable parts (ids,
// durations, amounts), with the word `refund` in 1 % of them; `fields` with a random UUID `requestId`
// and one of 1,000 `userId`s. Parsing, validation and compression cost what they cost on real logs.
import { randomUUID } from 'node:crypto'

export const DAY_MS = 86_400_000
/** The word a text search over this workload looks for: in 1 % of messages, and in no template. */
export const RARE_WORD = 'refund'
export const MODULES = ['http', 'billing', 'auth', 'orders', 'inventory', 'search', 'email', 'jobs', 'cache', 'gateway'] as const

export interface LogEvent {
  type: 'log'
  ts: string
  data: { level: string; module: string; message: string; fields: { requestId: string; userId: string } }
}

/** A seeded generator (mulberry32): the same run writes the same messages, while ids stay unique. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const ROUTES = ['/api/orders', '/api/cart', '/api/products', '/api/users', '/api/checkout', '/api/search']
const SERVICES = ['pricing', 'inventory', 'payments-gateway', 'mailer', 'tax']
const CARRIERS = ['dhl', 'ups', 'fedex', 'postnl', 'colissimo']
const COUNTRIES = ['NL', 'DE', 'FR', 'US', 'GB', 'ES', 'IT', 'SE']

function messageMaker(random: () => number) {
  const int = (max: number) => Math.floor(random() * max)
  const pick = <T>(values: readonly T[]): T => values[int(values.length)]
  const hex = (digits: number) => Array.from({ length: digits }, () => int(16).toString(16)).join('')
  const amount = () => (int(100_000) / 100).toFixed(2)
  const templates: (() => string)[] = [
    () => `GET ${pick(ROUTES)}/${int(1_000_000)} answered ${pick([200, 200, 200, 201, 204, 304, 404, 500])} in ${int(900) + 1} ms`,
    () => `payment pay_${hex(16)} captured: ${amount()} ${pick(['EUR', 'USD', 'GBP'])} for order ord_${int(10_000_000)}`,
    () => `user ${int(1000)} signed in from 10.${int(256)}.${int(256)}.${int(256)} after ${int(3) + 1} attempt(s)`,
    () => `cache miss for product:${int(500_000)}, fetched from the database in ${(random() * 40).toFixed(1)} ms`,
    () => `job ${pick(['reindex', 'invoice-run', 'cleanup', 'export'])}-${hex(8)} finished in ${(random() * 120).toFixed(2)} s, ${int(50_000)} items processed`,
    () => `retrying call to ${pick(SERVICES)} (attempt ${int(5) + 1}/5) after ${int(2000)} ms: ${pick(['connection reset', 'timeout', '503 from upstream'])}`,
    () => `order ord_${int(10_000_000)} shipped to ${pick(COUNTRIES)} via ${pick(CARRIERS)}, ${int(12) + 1} parcel(s), ${amount()} EUR`,
  ]
  const rare = () => `${RARE_WORD} ref_${hex(12)} issued: ${amount()} EUR for order ord_${int(10_000_000)}`
  return () => (random() < 0.01 ? rare() : pick(templates)())
}

/**
 * `count` log events, oldest first, spread evenly (with jitter) over the `spanMs` before `endMs`.
 * `first` and `total` place a slice of a longer stream, so that batches made apart still follow in time.
 */
export function realisticLogs(count: number, { seed = 1, endMs = Date.now(), spanMs = 7 * DAY_MS, first = 0, total = count } = {}): LogEvent[] {
  const random = seededRandom(seed + first)
  const message = messageMaker(random)
  const startMs = endMs - spanMs
  const step = spanMs / total
  const events: LogEvent[] = []
  for (let i = first; i < first + count; i++) {
    const roll = random()
    const ts = Math.min(endMs - 1, Math.floor(startMs + i * step + random() * step))
    events.push({
      type: 'log',
      ts: new Date(ts).toISOString(),
      data: {
        level: roll < 0.85 ? 'info' : roll < 0.95 ? 'warn' : 'error',
        module: MODULES[Math.floor(random() * MODULES.length)],
        message: message(),
        fields: { requestId: randomUUID(), userId: `user-${Math.floor(random() * 1000)}` },
      },
    })
  }
  return events
}
