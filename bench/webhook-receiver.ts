// A loopback webhook receiver for bench/webhooks.ts, in its own process so that answering does not
// compete with the dispatcher for the portal's thread. Answers after `delayMs`, records when each
// webhook-id first arrived, and reports over IPC. Stops when its parent goes.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

const delayMs = Number(process.env.RECEIVER_DELAY_MS ?? 0)
const firstArrival = new Map<string, number>()
let calls = 0
let firstCallAt = 0
let lastCallAt = 0

const server = http.createServer((request, response) => {
  const arrived = performance.timeOrigin + performance.now()
  request.resume()
  request.on('end', () => {
    calls++
    firstCallAt ||= arrived
    lastCallAt = arrived
    const id = String(request.headers['webhook-id'])
    if (!firstArrival.has(id)) firstArrival.set(id, arrived)
    const answer = () => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    if (delayMs > 0) setTimeout(answer, delayMs)
    else answer()
  })
})
server.keepAliveTimeout = 10_000
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }))
process.on('message', (message: string) => {
  if (message === 'stats') process.send!({ calls, firstCallAt, lastCallAt, firstArrival: Object.fromEntries(firstArrival) })
  if (message === 'reset') {
    calls = firstCallAt = lastCallAt = 0
    firstArrival.clear()
    process.send!('reset')
  }
})
process.on('disconnect', () => process.exit(0))
