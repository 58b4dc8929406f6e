import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, generateKeyPair } from 'jose'
import { setTimeout as sleep } from 'node:timers/promises'
import { createProject, DIALECTS, event, ingest, readAll, startTestPortal, type TestPortal, type TestProject } from '../support/portal.ts'
import { connectRaw, ingestHead, ingestRequest, type RawConnection } from './support/raw-http.ts'

// Short phase timeouts, so that each case takes seconds; the defaults are in docs/operations.md.
const HEADERS_TIMEOUT_MS = 1000
const REQUEST_TIMEOUT_MS = 2000
const KEEP_ALIVE_TIMEOUT_MS = 1000
const TIMEOUTS_ENV = {
  HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
  HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
}
/** Node looks for expired requests every quarter of the headers timeout (at most 1 s); the rest is a loaded machine's scheduling. */
const CLOSE_SLACK_MS = 1500
/** Node keeps an idle connection 1 s longer than the `Keep-Alive: timeout` it advertises, so that clients close first. */
const NODE_KEEP_ALIVE_BUFFER_MS = 1000
const GIB = 1024 * 1024 * 1024
/** What a client may have sent of a refused body: the kernel's buffers on loopback, and what was read before the close. */
const MAX_SENT_AFTER_REFUSAL_BYTES = 64 * 1024 * 1024

function assertClosedAfter(elapsedMs: number, timeoutMs: number, what: string) {
  assert.ok(elapsedMs >= timeoutMs - 50, `${what}: closed after ${Math.round(elapsedMs)} ms, before its ${timeoutMs} ms`)
  assert.ok(elapsedMs <= timeoutMs + CLOSE_SLACK_MS, `${what}: closed after ${Math.round(elapsedMs)} ms, more than ${CLOSE_SLACK_MS} ms past its ${timeoutMs} ms`)
}

/** Sends `chunk` every `everyMs` until the connection closes or `maxMs` passed. */
async function trickle(connection: RawConnection, chunk: string, everyMs: number, maxMs: number) {
  const until = performance.now() + maxMs
  while (!connection.isClosed() && performance.now() < until) {
    await connection.send(chunk)
    await Promise.race([sleep(everyMs), connection.closed])
  }
}

/** Writes a body of `declaredBytes` as fast as the connection takes it, until it closes (or 10 s). */
async function floodBody(connection: RawConnection, declaredBytes: number) {
  const chunk = Buffer.alloc(1024 * 1024, 0x20)
  const until = performance.now() + 10_000
  let written = 0
  while (written < declaredBytes && performance.now() < until) {
    if (!(await connection.send(chunk))) return
    written += chunk.length
  }
}

describe('slow and silent clients are closed when their phase times out', () => {
  let t: TestPortal
  before(async () => {
    t = await startTestPortal('sqlite', TIMEOUTS_ENV)
  })
  after(() => t.close())

  test('a connection that sends nothing, or its headers a byte at a time, gets a 408 and is closed after HTTP_HEADERS_TIMEOUT_MS', async () => {
    const silent = connectRaw(t.url)
    const slow = connectRaw(t.url)
    await Promise.all([silent.connected, slow.connected])
    await slow.send('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
    await trickle(slow, 'a', 100, HEADERS_TIMEOUT_MS + CLOSE_SLACK_MS + 500)
    const [silentMs, slowMs] = await Promise.all([silent.closed, slow.closed])
    assertClosedAfter(silentMs, HEADERS_TIMEOUT_MS, 'a silent connection')
    assertClosedAfter(slowMs, HEADERS_TIMEOUT_MS, 'headers a byte every 100 ms')
    assert.equal(slow.answers()[0]?.status, 408)
    assert.equal(JSON.parse(slow.answers()[0].body).code, 'request_timeout')
  })

  test('a kept-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS without a request', async () => {
    const connection = connectRaw(t.url)
    await connection.send('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    const answeredAt = performance.now()
    while (connection.answers().length === 0) await sleep(5)
    const sinceAnswerMs = await connection.closed.then(() => performance.now() - answeredAt)
    assert.equal(connection.answers()[0].status, 200)
    assertClosedAfter(sinceAnswerMs, KEEP_ALIVE_TIMEOUT_MS + NODE_KEEP_ALIVE_BUFFER_MS, 'an idle kept-alive connection')
  })
})

for (const dialect of DIALECTS) {
  describe(`hostile clients with a valid API key on ${dialect}`, () => {
    let t: TestPortal
    let project: TestProject
    before(async () => {
      t = await startTestPortal(dialect, TIMEOUTS_ENV)
      project = await createProject(t)
    })
    after(() => t.close())

    test('a body trickled, or gone silent after 1 KiB, gets a 408 and is closed after HTTP_REQUEST_TIMEOUT_MS', async () => {
      const body = JSON.stringify({ events: [event('log', { message: 'x'.repeat(4 * 1024 * 1024) })] })
      const slow = connectRaw(t.url)
      const silent = connectRaw(t.url)
      await silent.send(ingestHead(project, body) + body.slice(0, 1024))
      await slow.send(ingestHead(project, body))
      await trickle(slow, body.slice(0, 16), 200, REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS + 500)
      const [slowMs, silentMs] = await Promise.all([slow.closed, silent.closed])
      assertClosedAfter(slowMs, REQUEST_TIMEOUT_MS, '16 bytes of body every 200 ms')
      assertClosedAfter(silentMs, REQUEST_TIMEOUT_MS, 'a body silent after 1 KiB')
      for (const connection of [slow, silent]) assert.equal(connection.answers()[0]?.status, 408)
      const stored = await readAll(t, `/api/modules/logs/events?project_id=${project.id}`)
      assert.equal(stored.length, 0, 'nothing of the unfinished bodies is stored')
    })

    const refusals: [string, (p: TestProject) => string, number, string][] = [
      ['an unknown bearer (401)', (p) => ingestHead(p, '', { contentLength: GIB, bearer: `pk_${'0'.repeat(43)}` }), 401, 'invalid_token'],
      ['an access token instead of an API key (403)', (p) => ingestHead(p, '', { contentLength: GIB, bearer: t.adminToken }), 403, 'api_key_required'],
      ['a Content-Length over the batch limit (413)', (p) => ingestHead(p, '', { contentLength: GIB }), 413, 'batch_too_large'],
    ]
    for (const [what, head, status, code] of refusals) {
      test(`${what} with a 1 GiB body declared: answered with Connection: close, and the body is not read`, async () => {
        const connection = connectRaw(t.url)
        await connection.send(head(project))
        await Promise.race([floodBody(connection, GIB), connection.closed])
        const closedMs = await Promise.race([connection.closed, sleep(5_000).then(() => Infinity)])
        const [answer] = connection.answers()
        assert.equal(answer?.status, status)
        assert.equal(JSON.parse(answer.body).code, code)
        assert.equal(answer.headers.connection, 'close')
        assert.ok(closedMs < 2_000, `closed after ${Math.round(closedMs)} ms`)
        assert.ok(connection.bytesSent() < MAX_SENT_AFTER_REFUSAL_BYTES, `the client got ${connection.bytesSent()} bytes out before the close`)
      })
    }

    test('a body a little over the limit, from a client that reads only once it has sent it all: the client reads the 413', async () => {
      // The answer is out after the first 64 KiB; the portal must read the rest before closing, or the
      // reset its close sends would make the client's kernel drop the answer unread (EPIPE instead of 413).
      const declared = t.config.ingest.maxBatchBytes + 1
      const connection = connectRaw(t.url)
      connection.socket.pause()
      await connection.send(ingestHead(project, '', { contentLength: declared }) + ' '.repeat(64 * 1024))
      await sleep(300)
      assert.ok(await connection.send(' '.repeat(declared - 64 * 1024)), 'the rest of the body is taken')
      connection.socket.resume()
      const closedMs = await Promise.race([connection.closed, sleep(5_000).then(() => Infinity)])
      const [answer] = connection.answers()
      assert.equal(answer?.status, 413)
      assert.equal(JSON.parse(answer.body).code, 'batch_too_large')
      assert.equal(answer.headers.connection, 'close')
      assert.ok(closedMs < 3_000, `closed after ${Math.round(closedMs)} ms`)
    })

    test('five signed ingests and a malformed request in one write: five 200s, then the 400, then the close', async () => {
      const batches = Array.from({ length: 5 }, (_, index) => ingestRequest(project, [event('log', { message: `pipelined ${index}` })]))
      const connection = connectRaw(t.url)
      await connection.send(batches.join('') + 'NOT HTTP AT ALL\r\n\r\n')
      await Promise.race([connection.closed, sleep(5_000)])
      assert.ok(connection.isClosed(), 'the connection is closed after the 400')
      assert.deepEqual(
        connection.answers().map((answer) => answer.status),
        [200, 200, 200, 200, 200, 400],
      )
      assert.equal(JSON.parse(connection.answers()[5].body).code, 'malformed_request')
      const stored = await readAll(t, `/api/modules/logs/events?project_id=${project.id}`)
      assert.deepEqual(stored.map((log) => log.data.message).filter((message) => message.startsWith('pipelined')).sort(), [0, 1, 2, 3, 4].map((i) => `pipelined ${i}`))
    })

    test('invalid bearers stay 401 however many arrive, and the valid key still works (no lockout)', async () => {
      const wrong = `GET /api/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer pat_${'w'.repeat(43)}\r\n\r\n`
      // 2,000 in all: 20 rounds of 5 connections pipelining 20 each, so that the token store sees 100 lookups at a time.
      const statuses = new Set<number>()
      let answered = 0
      for (let round = 0; round < 20; round++) {
        const connections = Array.from({ length: 5 }, () => connectRaw(t.url))
        await Promise.all(connections.map((connection) => connection.send(wrong.repeat(20))))
        const until = performance.now() + 30_000
        const count = () => connections.reduce((sum, connection) => sum + connection.answers().length, 0)
        while (count() < 100 && performance.now() < until) await sleep(20)
        for (const connection of connections) {
          for (const answer of connection.answers()) statuses.add(answer.status)
          connection.socket.destroy()
        }
        answered += count()
      }
      assert.equal(answered, 2000)
      assert.deepEqual([...statuses], [401])
      assert.equal((await ingest(t, project, [event('log', { message: 'after the 401s' })])).status, 200)
    })
  })
}

/** Bytes waiting in the kernel on a loopback TCP socket, from /proc/net/tcp: `send` not yet taken by the peer, `receive` not yet read by its owner. */
function kernelQueues(localPort: number, remotePort: number): { send: number; receive: number } {
  const hex = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/)
    if (fields[1] === hex(localPort) && fields[2] === hex(remotePort)) {
      const [send, receive] = fields[4].split(':').map((queue) => parseInt(queue, 16))
      return { send, receive }
    }
  }
  throw new Error(`no socket 127.0.0.1:${localPort} → 127.0.0.1:${remotePort} in /proc/net/tcp`)
}

/** What one read of Node's takes off a socket at most: the requests parsed from it are read ahead, whatever the limit. */
const NODE_READ_BYTES = 64 * 1024
const MAX_PIPELINED = 4
const PIPELINED_REQUESTS = 2000

for (const dialect of DIALECTS) {
  describe(`pipelining on ${dialect}`, () => {
    let t: TestPortal
    let jwks: http.Server
    let releaseJwks: () => void = () => {}
    let jwksAsked: Promise<void>
    let bearer: string

    before(async () => {
      // The requests wait on a JWKS endpoint that answers only when told: while it holds, they stay in hand.
      let asked: () => void = () => {}
      jwksAsked = new Promise((resolve) => (asked = resolve))
      const held = new Promise<void>((resolve) => (releaseJwks = resolve))
      jwks = http.createServer((_request, response) => {
        asked()
        void held.then(() => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [] })))
      })
      await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve))
      const { privateKey } = await generateKeyPair('RS256')
      bearer = await new SignJWT({ org_id: 'x', role: 'admin' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://id.example.test/').setAudience('portal').setExpirationTime('5m').sign(privateKey)
      t = await startTestPortal(dialect, {
        HTTP_MAX_PIPELINED_REQUESTS: String(MAX_PIPELINED),
        AUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
        AUTH_JWT_ISSUER: 'https://id.example.test/',
        AUTH_JWT_AUDIENCE: 'portal',
      })
    })
    after(async () => {
      releaseJwks()
      await t.close()
      jwks.close()
    })

    test(`${PIPELINED_REQUESTS} requests in one write: the portal stops reading the connection at HTTP_MAX_PIPELINED_REQUESTS in hand, then answers them all in order`, { timeout: 60_000 }, async (t2) => {
      const request = `GET /api/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bearer}\r\n\r\n`
      const connection = connectRaw(t.url)
      await connection.connected
      void connection.send(request.repeat(PIPELINED_REQUESTS))
      await jwksAsked
      await sleep(500)
      // Handed to the kernel by the client, less what still waits in either socket's queue: what the portal has read.
      const portalPort = Number(new URL(t.url).port)
      const clientPort = connection.socket.localPort!
      const handedToKernel = connection.socket.bytesWritten - connection.socket.writableLength
      const readByPortal = handedToKernel - kernelQueues(clientPort, portalPort).send - kernelQueues(portalPort, clientPort).receive
      t2.diagnostic(`${request.length * PIPELINED_REQUESTS} bytes pipelined, ${handedToKernel} in the kernel, ${readByPortal} read by the portal while ${MAX_PIPELINED} requests waited`)
      assert.equal(connection.answers().length, 0, 'nothing is answered while the JWKS endpoint holds')
      assert.ok(readByPortal <= NODE_READ_BYTES + MAX_PIPELINED * request.length, `the portal read ${readByPortal} bytes ahead`)
      assert.ok(handedToKernel > readByPortal, 'the client had more to send')
      releaseJwks()
      const until = performance.now() + 45_000
      while (connection.answers().length < PIPELINED_REQUESTS && performance.now() < until) await sleep(50)
      const statuses = connection.answers().map((answer) => answer.status)
      assert.equal(statuses.length, PIPELINED_REQUESTS, 'every request is answered')
      assert.deepEqual([...new Set(statuses)], [401])
      connection.socket.destroy()
    })
  })
}
