import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

export interface ReceivedCall {
  path: string
  headers: Record<string, string>
  body: string
  at: number
  /** When the connection closed: the answer sent, or the caller gone (a hung call's timeout). */
  endedAt?: number
}

type Answer = (call: ReceivedCall, response: http.ServerResponse, request: http.IncomingMessage) => void

/**
 * Behaviours by the first path segment: /ok 200, /fail 500, /gone 410, /hang never answers,
 * /reset drops the connection, /slow/<ms> answers 200 after ms, /limited 429 with Retry-After: 1,
 * /redirect 302 to /ok. `answer` overrides a path's behaviour.
 */
const BEHAVIOURS: Record<string, Answer> = {
  ok: (_call, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'),
  fail: (_call, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end('receiver broke'),
  gone: (_call, response) => response.writeHead(410).end(),
  hang: () => {},
  reset: (_call, _response, request) => request.socket.destroy(),
  slow: (call, response) => {
    const ms = Number(call.path.split('/')[2] ?? 200)
    setTimeout(() => response.writeHead(200).end('slow thanks'), ms)
  },
  limited: (_call, response) => response.writeHead(429, { 'retry-after': '1' }).end(),
  redirect: (_call, response) => response.writeHead(302, { location: '/ok' }).end(),
}

export interface Receiver {
  base: string
  calls: ReceivedCall[]
  url(path: string): string
  callsTo(path: string): ReceivedCall[]
  answer(path: string, behaviour: Answer | keyof typeof BEHAVIOURS): void
  close(): Promise<void>
}

/** A real HTTP receiver on 127.0.0.1 that records every call it gets. */
export async function startReceiver(): Promise<Receiver> {
  const calls: ReceivedCall[] = []
  const overrides = new Map<string, Answer>()
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const path = request.url ?? '/'
      const call: ReceivedCall = { path, headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      calls.push(call)
      response.once('close', () => (call.endedAt = Date.now()))
      const behaviour = overrides.get(path) ?? BEHAVIOURS[path.split('/')[1]] ?? BEHAVIOURS.ok
      behaviour(call, response, request)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    base,
    calls,
    url: (path) => base + path,
    callsTo: (path) => calls.filter((call) => call.path === path),
    answer(path, behaviour) {
      overrides.set(path, typeof behaviour === 'string' ? BEHAVIOURS[behaviour] : behaviour)
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** Verifies a received call with the public standardwebhooks library; throws when the signature does not hold. */
export function verifyCall(secret: string, call: ReceivedCall): unknown {
  return new Webhook(secret).verify(call.body, {
    'webhook-id': call.headers['webhook-id'],
    'webhook-timestamp': call.headers['webhook-timestamp'],
    'webhook-signature': call.headers['webhook-signature'],
  })
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
