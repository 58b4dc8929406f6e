import fs from 'node:fs'
import http, { type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http'
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

/**
 * The listen backlog asked for; the kernel clamps it to net.core.somaxconn (4096 by default). Past the
 * backlog Linux drops a connect silently and the client sends it again a second later, so a load
 * balancer's probe that arrives with a burst of connects would take a second. Node's default of 511
 * is smaller than one burst of an idle-connection flood. Connections waiting in the backlog hold no
 * descriptor of the portal's.
 */
export const LISTEN_BACKLOG = 65_535

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
 * The HTTP server the portal listens with (Fastify's `serverFactory`): the phase timeouts, at most
 * `maxConnections` open, accept errors logged rather than fatal, and at most
 * `maxPipelinedRequests` requests of one connection handled at once.
 */
export function createPortalServer(ctx: PortalContext, handler: RequestListener): Server {
  const log = ctx.log
  const { maxConnections, reason } = connectionCap(ctx.config)
  const { maxPipelinedRequests } = ctx.config.http
  log.info({ maxConnections, reason, maxPipelinedRequests }, 'client connections capped')
  const server = http.createServer(httpServerOptions(ctx.config.http), pipelineLimited(handler, maxPipelinedRequests))
  guardServer(server, maxConnections, log)
  return server
}

/** A refused body of at most this many declared bytes is read to its end before the connection closes. */
const DRAINED_BODY_MAX_BYTES = 16 * 1024 * 1024
/** ...for at most this long after the answer. */
const DRAIN_MAX_MS = 2_000

/** No request body read after an answer that refused it, beyond what lets the client read that answer. */
export const connectionLimits = fp(async (app) => {
  // An answer given before the body arrived (401, 403, 413 from Content-Length, 503) closes the
  // connection: keeping it alive would mean reading and discarding the whole declared body first.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.raw.complete) return
    reply.header('connection', 'close')
    const declared = Number(request.headers['content-length'])
    if (declared <= DRAINED_BODY_MAX_BYTES) closeOnceBodyRead(request.raw)
  })
})

/**
 * Closing a socket with the client's bytes unread makes the kernel send a reset, and a reset makes the
 * client's kernel drop the answer it has not read yet: a client still sending a body a little over the
 * limit saw `EPIPE` instead of the 413. So the connection closes once the declared body has arrived (Node
 * discards it) or DRAIN_MAX_MS after the answer, as nginx's lingering close and Go's server do; bodies
 * declared larger than DRAINED_BODY_MAX_BYTES are not worth reading and close at once.
 */
function closeOnceBodyRead(request: IncomingMessage) {
  const socket = request.socket as Socket & { destroySoon(): void }
  const destroySoon = socket.destroySoon
  // Node calls destroySoon once a `Connection: close` answer is out.
  socket.destroySoon = () => {
    if (request.complete) return destroySoon.call(socket)
    const close = () => {
      clearTimeout(timer)
      destroySoon.call(socket)
    }
    const timer = setTimeout(close, DRAIN_MAX_MS)
    request.once('end', close)
    socket.once('close', () => clearTimeout(timer))
  }
}

/**
 * Hands the requests of one connection to `handler` at most `limit` at a time, in order, and stops
 * reading the connection while `limit` are in hand: a client pipelining thousands of requests in one
 * write gets them handled a few at a time, as nginx and h2o do, instead of thousands of handlers at once.
 */
function pipelineLimited(handler: RequestListener, limit: number): RequestListener {
  const pipelines = new WeakMap<Socket, { handling: number; waiting: [IncomingMessage, ServerResponse][] }>()
  const start = (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as Socket
    const pipeline = pipelines.get(socket)!
    pipeline.handling++
    onceAnswered(response, () => {
      pipeline.handling--
      const next = pipeline.waiting.shift()
      if (next) return start(...next)
      if (pipeline.handling < limit) resumeReading(socket)
    })
    handler(request, response)
  }
  return (request, response) => {
    const socket = request.socket as Socket
    let pipeline = pipelines.get(socket)
    if (!pipeline) pipelines.set(socket, (pipeline = { handling: 0, waiting: [] }))
    if (pipeline.handling < limit && pipeline.waiting.length === 0) start(request, response)
    else pipeline.waiting.push([request, response])
    if (pipeline.handling >= limit) stopReading(socket)
  }
}

/**
 * Node's HTTP server feeds the socket to its parser natively, so `socket.pause()` does not stop it
 * reading (Node's own back-pressure on pipelined requests pauses the same handle). What was already
 * read, at most one 64 KiB read, is still parsed; its requests wait their turn in `pipelineLimited`.
 */
function stopReading(socket: Socket) {
  const handle = (socket as unknown as { _handle?: { readStop?: () => number } })._handle
  if (handle?.readStop && !pausedSockets.has(socket)) {
    pausedSockets.add(socket)
    handle.readStop()
  }
}

function resumeReading(socket: Socket) {
  if (!pausedSockets.delete(socket) || socket.destroyed) return
  ;(socket as unknown as { _handle?: { readStart?: () => number } })._handle?.readStart?.()
}

const pausedSockets = new WeakSet<Socket>()

/**
 * Counts turns of the event loop, but only while a connection accepted in the last two is open to
 * being compared: a connection accepted in one turn is read in the next one's poll phase at the
 * earliest (a probe's request is often in the kernel already when it is accepted in a burst of an
 * attacker's connections), so until two turns have passed it has had no chance to say anything.
 */
function eventLoopTurns() {
  let turn = 0
  let turnsWanted = 0
  let scheduled = false
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(tick)
  }
  const tick = () => {
    scheduled = false
    turn++
    if (--turnsWanted > 0) schedule()
  }
  return {
    current: () => turn,
    /** the turn a connection is accepted in; the count goes on until it is two turns old */
    stamp(): number {
      turnsWanted = 2
      schedule()
      return turn
    },
  }
}

function guardServer(server: Server, maxConnections: number, log: FastifyBaseLogger) {
  // Connections with no request in flight, longest idle first: the ones given up when the cap is reached.
  const idle = new Set<Socket>()
  const acceptedInTurn = new WeakMap<Socket, number>()
  const turns = eventLoopTurns()
  let open = 0
  const warnShed = throttledWarning(log, 'connection cap reached: the longest idle connection was closed')
  const warnRefused = throttledWarning(log, 'connection cap reached with every connection busy or just accepted: a new one was refused')
  const warnAccept = throttledWarning(log, 'could not accept a connection')

  /** The connection idle longest among those that have had a turn to send their request, if any. */
  const longestIdle = (): Socket | undefined => {
    for (const socket of idle) {
      // Accepted in this turn or the one before: its bytes, if it sent some, may not have been read yet.
      if (turns.current() - (acceptedInTurn.get(socket) ?? -Infinity) >= 2) return socket
    }
    return undefined
  }

  server.on('connection', (socket: Socket) => {
    open++
    owedAnswers.set(socket, new Set())
    socket.once('close', () => {
      open--
      idle.delete(socket)
    })
    if (open > maxConnections) {
      const oldest = longestIdle()
      if (!oldest) {
        // Every other connection is busy or as new as this one: the newcomer is the one refused.
        warnRefused({ open, maxConnections })
        return void socket.destroy()
      }
      idle.delete(oldest)
      oldest.destroy()
      warnShed({ open, maxConnections })
    }
    idle.add(socket)
    acceptedInTurn.set(socket, turns.stamp())
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
