// Apart from rate-limit.ts, so that the code that only admits a batch (and with it the ingest writer's thread)
// does not load ioredis.
import { Redis } from 'ioredis'
import type { FastifyBaseLogger } from 'fastify'
import type { IngestRateLimiter } from '../context.ts'
import { createMemoryRateLimiter, decide } from './rate-limit.ts'
import { retryUntilReachable, StartupError } from '../startup.ts'

const TAKE_SCRIPT = `
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local n = tonumber(ARGV[1])
local er = tonumber(ARGV[2])
local br = tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'e', 'b', 't')
local e = tonumber(s[1]) or er
local b = tonumber(s[2]) or br
local t = tonumber(s[3]) or now
local elapsed = math.max(0, now - t)
e = math.min(er, e + elapsed * er / 1000)
b = math.min(br, b + elapsed * br / 1000)
local e0 = e
local b0 = b
local allowed = 0
if e >= math.min(n, er) and b >= 1 then
  e = e - n
  b = b - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'e', tostring(e), 'b', tostring(b), 't', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((er - e) / er * 1000) + 1000)
return { allowed, tostring(e0), tostring(b0), tostring(now) }
`

/** The client with TAKE_SCRIPT defined as a command (`defineCommand` adds it at run time): allowed (1 or 0), then the tokens it saw and its clock. */
type RateLimitRedis = Redis & {
  portalTakeTokens(key: string, events: number, eventsPerSecond: number, batchesPerSecond: number): Promise<[allowed: number, events: string, batches: string, now: string]>
}

/**
 * Limits shared by every portal instance through Redis. While Redis cannot be reached (or does not
 * answer within REDIS_TIMEOUT_MS: a stalled event loop can make a healthy Redis look late), each
 * instance falls back to its own in-memory buckets (logged once per outage) and returns to the
 * shared ones by itself when Redis answers again.
 */
export function createRedisRateLimiter(url: string, batchesPerSecond: number, log: FastifyBaseLogger, commandTimeoutMs: number): IngestRateLimiter & { redis: Redis } {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: commandTimeoutMs, lazyConnect: false }) as RateLimitRedis
  redis.on('error', () => {}) // reported through the fallback warning below, not once per reconnect attempt
  redis.defineCommand('portalTakeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT })
  const fallback = createMemoryRateLimiter(batchesPerSecond)
  let degraded = false

  return {
    redis,
    async take(projectId, events, eventsPerSecond) {
      try {
        const [allowed, e0, b0, now] = await redis.portalTakeTokens(`portal:ingest-rate:${projectId}`, events, eventsPerSecond, batchesPerSecond)
        if (degraded) log.info('redis answers again; ingest rate limits are shared across instances once more')
        degraded = false
        // Re-run the same arithmetic on the tokens the script saw, to explain its decision the same way.
        const state = { events: Number(e0), batches: Number(b0), updatedAt: Number(now) }
        const { decision } = decide(state, Number(now), events, eventsPerSecond, batchesPerSecond)
        return { ...decision, allowed: allowed === 1, source: 'redis' }
      } catch (error) {
        if (!degraded) log.warn({ err: error }, 'redis unreachable; ingest rate limits fall back to this instance only')
        degraded = true
        return fallback.take(projectId, events, eventsPerSecond)
      }
    },
    async close() {
      redis.disconnect()
    },
  }
}

/**
 * The Redis limiter once Redis has answered a PING, waiting up to `waitMs` for one that is not up yet (logged):
 * a start never goes on with limits that are silently per instance. Still away after the wait, a StartupError.
 */
export async function connectRedisRateLimiter(url: string, batchesPerSecond: number, log: FastifyBaseLogger, commandTimeoutMs: number, waitMs: number) {
  const limiter = createRedisRateLimiter(url, batchesPerSecond, log, commandTimeoutMs)
  const target = new URL(url)
  const server = `Redis at ${target.hostname}:${target.port || 6379}`
  // A PING refused while disconnected says only that; the connection's own error says why (ECONNREFUSED, …).
  let connectionError: (Error & { code?: string }) | undefined
  limiter.redis.on('error', (error) => (connectionError = error))
  const reason = (error: unknown) => connectionError?.code ?? connectionError?.message ?? (error as Error).message
  try {
    await retryUntilReachable(() => limiter.redis.ping(), {
      waitMs,
      retryable: () => true,
      onRetry: (error, retryInMs) => log.warn(`${server} is not reachable yet (${reason(error)}); trying again in ${(retryInMs / 1000).toFixed(1)} s, for up to ${waitMs / 1000} s in all (STARTUP_WAIT_SECONDS)`),
    })
    return limiter
  } catch (error) {
    await limiter.close()
    throw new StartupError(`REDIS_URL: ${server} cannot be reached (${reason(error)})${waitMs ? ` after ${waitMs / 1000} s` : ''}; start it, fix REDIS_URL, or unset it to limit ingest per instance`)
  }
}
