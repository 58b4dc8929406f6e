import { Redis } from 'ioredis'
import type { InvalidationChannel } from '../storage/storage.ts'

const CHANNEL = 'portal:invalidations'

/**
 * Redis pub/sub, beside the database's own channel when REDIS_URL is set: it still reaches every portal
 * where the database's cannot (PostgreSQL behind a transaction-pooling PgBouncer, which drops LISTEN).
 * Redis publishes at once, not at a commit; a message sent inside a transaction also goes out through
 * the database's channel, which delivers it after the commit.
 */
export function redisInvalidations(url: string, commandTimeoutMs: number): InvalidationChannel {
  const publisher = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: commandTimeoutMs })
  const subscriber = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true })
  // Unreachable Redis is reported by the rate limiter; here a lost message falls back to the caches' expiry.
  publisher.on('error', () => {})
  subscriber.on('error', () => {})
  const listeners = new Set<(topic: string | null) => void>()
  const deliver = (topic: string | null) => {
    for (const listener of listeners) listener(topic)
  }
  let readyBefore = false
  subscriber.on('message', (_channel: string, topic: string) => deliver(topic))
  // ioredis subscribes again by itself after a reconnect; what was published meanwhile is lost.
  subscriber.on('ready', () => {
    if (readyBefore) deliver(null)
    readyBefore = true
  })
  let started = false

  return {
    async publish(topic) {
      await publisher.publish(CHANNEL, topic)
    },
    subscribe(listener) {
      listeners.add(listener)
      if (!started) {
        started = true
        subscriber.connect().then(() => subscriber.subscribe(CHANNEL), () => {})
      }
      return () => listeners.delete(listener)
    },
    async close() {
      listeners.clear()
      publisher.disconnect()
      subscriber.disconnect()
    },
  }
}

/**
 * Every message to both channels, and every message of either to the subscribers: a listener may hear
 * one message twice, which forgetting a cache twice is harmless for. A channel that fails to publish
 * does not fail the other.
 */
export function bothChannels(primary: InvalidationChannel, secondary: InvalidationChannel): InvalidationChannel {
  return {
    async publish(topic, trx) {
      const results = await Promise.allSettled([primary.publish(topic, trx), secondary.publish(topic, trx)])
      // Inside a transaction the database's channel must have taken the message: it is the one sent at the commit.
      if (results[0].status === 'rejected' && (trx || results[1].status === 'rejected')) throw results[0].reason
    },
    subscribe(listener) {
      const stops = [primary.subscribe(listener), secondary.subscribe(listener)]
      return () => stops.forEach((stop) => stop())
    },
    async close() {
      await secondary.close()
    },
  }
}
