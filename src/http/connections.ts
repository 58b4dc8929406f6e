import fs from 'node:fs'
import type { Server, ServerOptions, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.ts'
import type { PortalContext } from '../context.ts'

/** The soft limit Linux reports when /proc cannot be read: the usual default. */
const FALLBACK_DESCRIPTOR_LIMIT = 1024
/** Descriptors Node and the portal hold whatever the load: event loop, stdio, log, SQLite's files, Redis, OIDC. */
const BASE_RESERVED_DESCRIPTORS = 64
const WARNING_INTERVAL_MS = 10_000

/** The open-files limit of this process (Node raises its soft limit to the hard one at start). */
export function descriptorLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'))
    if (!match) return undefined
    return match[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(match[1])
  } catch {
    return undefined
  }
}

/**
 * How many client connections the portal keeps open at most, and why: HTTP_MAX_CONNECTIONS, or the
 * descriptor limit less what the portal opens itself (its database pool, webhook attempts, Node's own),
 * so that accepting clients never leaves a database query or a webhook without a descriptor.
 */
export function connectionCap(config: Config, limit = descriptorLimit()): { maxConnections: number; reason: string } {
  if (config.http.maxConnections !== undefined) return { maxConnections: config.http.maxConnections, reason: 'HTTP_MAX_CONNECTIONS' }
  const descriptors = limit ?? FALLBACK_DESCRIPTOR_LIMIT
  const reserved = BASE_RESERVED_DESCRIPTORS + config.databasePoolSize + config.webhooks.concurrency
  // A limit too small for the whole reserve still leaves half of it to clients.
  const maxConnections = Math.max(descriptors - reserved, Math.floor(descriptors / 2))
  const source = limit === undefined ? `no /proc/self/limits, assumed ${descriptors}` : `open-files limit ${descriptors}`
  return { maxConnections, reason: `${source} less ${reserved} reserved for the database pool, webhook attempts and the process` }
}

/** Node's HTTP server options for the phase timeouts (Fastify sets requestTimeout and keepAliveTimeout again from its own options). */
export function httpServerOptions(limits: Config['http']): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // How often Node looks for requests past their deadline; its default of 30 s would let a slow one run that much longer.
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(limits.headersTimeoutMs / 4))),
  }
}

/** The answers a connection owes: responses to requests received and not yet finished. */
const owedAnswers = new WeakMap<Socket, Set<ServerResponse>>()

/**
 * Calls `send` once every request already read in full on `socket` has had its answer: a request that
 * breaks the connection (malformed, too slow) must not take the answers of the pipelined requests
 * before it, which may already be committed.
 */
export function afterOwedAnswers(socket: Socket, send: () => void): void {
  const awaited = [...(owedAnswers.get(socket) ?? [])].filter((response) => response.req.complete)
  let left = awaited.length
  if (left === 0) return send()
  for (const response of awaited) {
    onceAnswered(response, () => {
      if (--left === 0) send()
    })
  }
}

function onceAnswered(response: ServerResponse, then: () => void) {
  let called = false
  const once = () => {
    if (called) return
    called = true
    then()
  }
  response.once('finish', once)
  response.once('close', once)
}

/**
 * Connection limits for the app's server: at most `maxConnections` open, accept errors logged rather
 * than fatal, and no request body read after an answer that refused it.
 */
export const connectionLimits = fp<{ ctx: PortalContext }>(async (app, { ctx }) => {
  const log = ctx.log
  const { maxConnections, reason } = connectionCap(ctx.config)
  log.info({ maxConnections, reason }, 'client connections capped')
  guardServer(app.server, maxConnections, log)

  // An answer given before the body arrived (401, 403, 413 from Content-Length, 503) closes the
  // connection: keeping it alive would mean reading and discarding the whole declared body first.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.raw.complete) reply.header('connection', 'close')
  })
})

function guardServer(server: Server, maxConnections: number, log: FastifyBaseLogger) {
  // Connections with no request in flight, oldest first: the ones given up when the cap is reached.
  const idle = new Set<Socket>()
  let open = 0
  const warnShed = throttledWarning(log, 'connection cap reached: the oldest idle connection was closed')
  const warnAccept = throttledWarning(log, 'could not accept a connection')

  server.on('connection', (socket: Socket) => {
    open++
    owedAnswers.set(socket, new Set())
    idle.add(socket)
    socket.once('close', () => {
      open--
      idle.delete(socket)
    })
    if (open <= maxConnections) return
    // Idle connections (silent, headers trickling, kept alive) go first, so that a flood of them
    // cannot keep out a health probe or an ingest; the newcomer goes when every other one is busy.
    const oldest = idle.values().next().value ?? socket
    idle.delete(oldest)
    oldest.destroy()
    warnShed({ open, maxConnections })
  })

  server.on('request', (request, response: ServerResponse) => {
    const socket = request.socket as Socket
    const owed = owedAnswers.get(socket)
    if (!owed) return
    owed.add(response)
    idle.delete(socket)
    onceAnswered(response, () => {
      owed.delete(response)
      if (owed.size === 0 && !socket.destroyed) idle.add(socket)
    })
  })

  // Accepting can fail (EMFILE when other descriptors use up the limit); libuv has already closed the
  // pending connection. Without a listener, the 'error' event would end the process. Added once
  // listening, so that a port in use still fails the start.
  server.once('listening', () => {
    server.on('error', (error: NodeJS.ErrnoException) => warnAccept({ code: error.code, syscall: error.syscall }))
  })
}

/** A warning logged at most once every WARNING_INTERVAL_MS, with how many were left out since. */
function throttledWarning(log: FastifyBaseLogger, message: string) {
  let lastAt = -Infinity
  let suppressed = 0
  return (fields: Record<string, unknown>) => {
    const now = Date.now()
    if (now - lastAt < WARNING_INTERVAL_MS) return void suppressed++
    log.warn({ ...fields, suppressed }, message)
    lastAt = now
    suppressed = 0
  }
}
