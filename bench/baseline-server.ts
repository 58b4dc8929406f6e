// The least an ingest server must do, to measure the portal against: read the body, verify the
// HMAC, parse the JSON, answer. Run as its own process by bench/ingest.ts.
import http from 'node:http'
import { createHmac, timingSafeEqual } from 'node:crypto'

const secret = process.env.BENCH_SECRET!
const server = http.createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk) => chunks.push(chunk))
  request.on('end', () => {
    const body = Buffer.concat(chunks)
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
