import http from 'node:http'
import { createHash } from 'node:crypto'
import type { AddressInfo } from 'node:net'

/** One ingest request as it passed through the proxy. */
export interface ProxiedIngest {
  /** when it arrived, from performance.now() */
  at: number
  idempotencyKey: string | undefined
  bodyBytes: number
  events: number
  /** what the client was answered; `lost` when the connection was cut after the portal answered */
  answer: number | 'lost'
  /** the portal replayed a stored answer (`Idempotent-Replayed: true`) */
  replayed: boolean
}

export interface CaptureRequest {
  headers: http.IncomingHttpHeaders
  body: Record<string, any>
}

/**
 * A loopback HTTP proxy in front of a real portal that the test controls: it can answer ingest with
 * an error status for a while, or forward a batch and cut the connection before the client hears the
 * answer. It answers `POST /api/errors/capture` itself, recording what it received, unless
 * `forwardCaptures` is set: then captures go to the portal like batches, and answers can be lost too.
 */
export interface FaultProxy {
  url: string
  ingests: ProxiedIngest[]
  captures: CaptureRequest[]
  /** answer the next `count` ingest requests with `status` (and these headers) without forwarding them */
  failIngest(count: number, status: number, headers?: Record<string, string>): void
  /** forward the next `count` ingest requests (or forwarded captures), then destroy the connection instead of answering */
  loseIngestAnswers(count: number): void
  /** answer the next `count` captures with `status` */
  failCaptures(count: number, status: number, headers?: Record<string, string>): void
  close(): Promise<void>
}

export async function startFaultProxy(target: string, options: { forwardCaptures?: boolean } = {}): Promise<FaultProxy> {
  const ingests: ProxiedIngest[] = []
  const captures: CaptureRequest[] = []
  const ingestFaults: { status: number; headers: Record<string, string> }[] = []
  const captureFaults: { status: number; headers: Record<string, string> }[] = []
  const seenGroups = new Set<string>()
  let answersToLose = 0

  const server = http.createServer(async (request, response) => {
    const body = await readBody(request)
    const isCapture = request.url === '/api/errors/capture'
    if (isCapture && !options.forwardCaptures) {
      const fault = captureFaults.shift()
      if (fault) return answer(response, fault.status, { detail: 'injected' }, fault.headers)
      const capture = JSON.parse(body.toString('utf8'))
      captures.push({ headers: request.headers, body: capture })
      const fingerprint = createHash('sha256').update(`${capture.name}\n${capture.message}`).digest('hex')
      const isNewGroup = !seenGroups.has(fingerprint)
      seenGroups.add(fingerprint)
      return answer(response, 201, { id: `occ_${captures.length}`, fingerprint, isNewGroup })
    }
    const isIngest = request.url === '/api/ingest'
    const record: ProxiedIngest = {
      at: performance.now(),
      idempotencyKey: request.headers['x-service-idempotency-key'] as string | undefined,
      bodyBytes: body.length,
      events: isIngest ? countEvents(body) : 0,
      answer: 0,
      replayed: false,
    }
    if (isIngest) ingests.push(record)
    const fault = isIngest ? ingestFaults.shift() : undefined
    if (fault) {
      record.answer = fault.status
      return answer(response, fault.status, { type: 'about:blank', title: 'injected', status: fault.status, detail: 'injected by the test proxy' }, fault.headers)
    }
    const forwarded = await forward(target, request, body).catch(() => undefined)
    if (!forwarded || ((isIngest || isCapture) && answersToLose > 0)) {
      if (forwarded) answersToLose -= 1
      record.answer = 'lost'
      return request.socket.destroy()
    }
    record.answer = forwarded.status
    record.replayed = forwarded.headers['idempotent-replayed'] === 'true'
    response.writeHead(forwarded.status, forwarded.headers)
    response.end(forwarded.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    ingests,
    captures,
    failIngest(count, status, headers = {}) {
      for (let i = 0; i < count; i++) ingestFaults.push({ status, headers })
    },
    loseIngestAnswers(count) {
      answersToLose += count
    },
    failCaptures(count, status, headers = {}) {
      for (let i = 0; i < count; i++) captureFaults.push({ status, headers })
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

function readBody(request: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
  })
}

function countEvents(body: Buffer): number {
  try {
    return JSON.parse(body.toString('utf8')).events.length
  } catch {
    return 0
  }
}

function answer(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers })
  response.end(JSON.stringify(body))
}

function forward(target: string, request: http.IncomingMessage, body: Buffer) {
  const url = new URL(request.url ?? '/', target)
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const outgoing = http.request(url, { method: request.method, headers: { ...request.headers, host: url.host, connection: 'close' } }, (res) => {
      readBody(res).then((data) => resolve({ status: res.statusCode ?? 502, headers: withoutHopHeaders(res.headers), body: data }), reject)
    })
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

function withoutHopHeaders(headers: http.IncomingHttpHeaders): http.IncomingHttpHeaders {
  const { connection: _connection, 'keep-alive': _keepAlive, 'transfer-encoding': _transferEncoding, ...rest } = headers
  return rest
}

/** The address of a loopback port that nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<string> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}`
}
