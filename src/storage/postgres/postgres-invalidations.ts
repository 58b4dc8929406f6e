import pg from 'pg'
import { sql } from 'kysely'
import type { InvalidationChannel } from '../storage.ts'
import type { Connection } from '../tables.ts'

const CHANNEL = 'portal_invalidations'
const RECONNECT_DELAY_MS = 1_000

/**
 * PostgreSQL's LISTEN/NOTIFY: a message published inside a transaction is delivered when it commits,
 * to every session listening, so the other portals forget a revoked key milliseconds after the revoke.
 * The listening connection is its own, outside the pool, opened at the first subscribe; while it is
 * down, subscribers lean on their own expiry, and hear null once it is back.
 */
export function postgresInvalidations(url: string, db: Connection): InvalidationChannel {
  const listeners = new Set<(topic: string | null) => void>()
  let client: pg.Client | null = null
  let reconnect: NodeJS.Timeout | null = null
  let closed = false
  let connectedBefore = false

  const deliver = (topic: string | null) => {
    for (const listener of listeners) listener(topic)
  }

  async function listen() {
    if (closed || client) return
    const next = new pg.Client({ connectionString: url })
    client = next
    const lost = () => {
      if (client !== next) return
      client = null
      next.end().catch(() => {})
      if (!closed) reconnect = setTimeout(() => void listen(), RECONNECT_DELAY_MS).unref()
    }
    next.on('error', lost)
    next.on('end', lost)
    next.on('notification', (message) => deliver(message.payload ?? null))
    try {
      await next.connect()
      await next.query(`listen ${CHANNEL}`)
      // Messages sent while no connection listened are lost: whatever they said, forget.
      if (connectedBefore) deliver(null)
      connectedBefore = true
    } catch {
      lost()
    }
  }

  return {
    async publish(topic, trx) {
      await sql`select pg_notify(${CHANNEL}, ${topic})`.execute(trx ?? db)
    },
    subscribe(listener) {
      listeners.add(listener)
      void listen()
      return () => listeners.delete(listener)
    },
    async close() {
      closed = true
      listeners.clear()
      if (reconnect) clearTimeout(reconnect)
      const open = client
      client = null
      await open?.end().catch(() => {})
    },
  }
}
