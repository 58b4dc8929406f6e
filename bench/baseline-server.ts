// The least a server must do, to measure the portal against. Ingest (`/api/ingest`): read the body,
// verify the HMAC, parse the JSON, answer. Error capture (`/api/errors/capture`): read the body,
// parse the JSON, answer 201. Run as its own process by bench/ingest.ts and bench/errors.ts.
import http from 'node:http'
import { createHmac, timingSafeEqual } from 'node:crypto'

const secret = process.env.BENCH_SECRET!
const CAPTURED = JSON.stringify({ id: 'occ_baseline', fingerprint: '0'.repeat(64), groupFingerprint: '0'.repeat(64), isNewGroup: false })

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk) => chunks.push(chunk))
  request.on('end', () => {
    const body = Buffer.concat(chunks)
    if (request.url === '/api/errors/capture') {
      JSON.parse(body.toString('utf8'))
      response.writeHead(201, { 'content-type': 'application/json' }).end(CAPTURED)
      return
    }
    const expected = createHmac('sha256', secret).update(body).digest()
    const given = Buffer.from(String(request.headers['x-service-signature']), 'hex')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      response.writeHead(403).end()
      return
    }
    const { events } = JSON.parse(body.toString('utf8'))
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: events.length, rejected: [] }))
  })
})
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('listening'))
