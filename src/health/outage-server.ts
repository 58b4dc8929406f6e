import http from 'node:http'
import { problemTitle } from '../http/problem.ts'

/** Retry-After of the stand-in's answers: the portal tries to open its database again this often. */
export const OPEN_RETRY_SECONDS = 5

/**
 * What answers on the portal's address while its database cannot be opened at start (a full disk, where SQLite
 * cannot even make its shared-memory file; PostgreSQL down): `GET /api/health` 503 with the reason, in the health
 * document's shape, and every other request 503 `database_unavailable` with Retry-After. A load balancer and the
 * clients see an outage rather than a refused connection. Closed once the portal itself can open the database.
 */
export async function listenDuringOutage(host: string, port: number, reason: () => string): Promise<{ close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const failing = { status: 'failing', latencyMs: 0, error: reason() }
    const [status, type, body] =
      request.method === 'GET' && request.url?.split('?')[0] === '/api/health'
        ? [503, 'application/json', { status: 'unavailable', checks: { database: failing, authorization: { ...failing, error: 'the token store is in the database' } } }]
        : [
            503,
            'application/problem+json',
            { type: 'about:blank', title: problemTitle(503), status: 503, detail: `the database cannot be opened (${reason()}); retry shortly`, code: 'database_unavailable' },
          ]
    // The body is not read: the connection is closed after the answer rather than drained.
    response.writeHead(status, { 'content-type': `${type}; charset=utf-8`, 'retry-after': String(OPEN_RETRY_SECONDS), connection: 'close' })
    response.end(JSON.stringify(body))
  })
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve))
  return {
    close: () =>
      new Promise<void>((resolve) => {
        // Answers in flight are finished; each closes its connection (`connection: close`).
        server.close(() => resolve())
        server.closeIdleConnections()
      }),
  }
}
