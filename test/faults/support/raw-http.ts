import net from 'node:net'
import { hmacSha256Hex } from '../../../src/identity/secrets.ts'
import type { TestProject } from '../../support/portal.ts'

/** One HTTP/1.1 answer as it came over the wire. */
export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * A TCP connection to a portal on loopback, driven byte by byte as a hostile client would: what it
 * received, how much it managed to send, and when the portal closed it.
 */
export interface RawConnection {
  socket: net.Socket
  connected: Promise<void>
  /** resolves with the milliseconds from connecting to the portal closing (or resetting) the connection */
  closed: Promise<number>
  isClosed(): boolean
  /** the answers received so far, complete ones only */
  answers(): RawAnswer[]
  /** body bytes the kernel accepted from this client (written, not necessarily read by the portal) */
  bytesSent(): number
  /** writes `data`, resolving once the socket can take more; false when the connection is gone */
  send(data: string | Buffer): Promise<boolean>
}

export function connectRaw(url: string): RawConnection {
  const { hostname, port } = new URL(url)
  const socket = net.connect(Number(port), hostname)
  const startedAt = performance.now()
  const received: Buffer[] = []
  let closed = false
  socket.on('data', (chunk: Buffer) => received.push(chunk))
  socket.on('error', () => {})
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('close', () => reject(new Error('closed before connecting')))
  })
  connected.catch(() => {})
  const closedAt = new Promise<number>((resolve) =>
    socket.once('close', () => {
      closed = true
      resolve(performance.now() - startedAt)
    }),
  )
  return {
    socket,
    connected,
    closed: closedAt,
    isClosed: () => closed,
    answers: () => parseAnswers(Buffer.concat(received)),
    bytesSent: () => socket.bytesWritten,
    async send(data) {
      if (closed || socket.destroyed) return false
      if (socket.write(data)) return true
      return new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => () => {
          socket.off('drain', onDrain)
          socket.off('close', onClose)
          resolve(ok)
        }
        const onDrain = done(true)
        const onClose = done(false)
        socket.once('drain', onDrain)
        socket.once('close', onClose)
      })
    },
  }
}

/** The complete HTTP/1.1 answers in `bytes`, in order; each must carry a Content-Length. */
export function parseAnswers(bytes: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = []
  let offset = 0
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', offset)
    if (headEnd < 0) return answers
    const [statusLine, ...lines] = bytes.subarray(offset, headEnd).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    const bodyStart = headEnd + 4
    if (bytes.length < bodyStart + length) return answers
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: bytes.subarray(bodyStart, bodyStart + length).toString('utf8') })
    offset = bodyStart + length
  }
}

/** The request line and headers of a signed ingest whose body is `body` (or only declares `contentLength`). */
export function ingestHead(project: Pick<TestProject, 'key' | 'webhookSecret'>, body: string, { contentLength = Buffer.byteLength(body), bearer = project.key } = {}): string {
  return (
    `POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\n` +
    `X-Service-Signature: ${hmacSha256Hex(project.webhookSecret, body)}\r\nContent-Length: ${contentLength}\r\n\r\n`
  )
}

/** A whole signed ingest request, head and body. */
export function ingestRequest(project: Pick<TestProject, 'key' | 'webhookSecret'>, events: unknown[]): string {
  const body = JSON.stringify({ events })
  return ingestHead(project, body) + body
}
