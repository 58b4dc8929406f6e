// `npm run bench -- sdk`: events per second of client.log() into a running portal, and the client's
// cost per call, against raw signed ingest of the same events in batches of the same size.
import { createHmac, randomUUID } from 'node:crypto'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { PortalClient } from '../sdk/src/index.ts'
import { withPortal, type Target } from './ingest.ts'

const EVENTS_PER_ROUND = 10_000
// 100 is the largest batch of the raw ingest benchmark (bench/ingest.ts); 1 and 8 batches in flight.
const BATCH_SIZE = 100
const CONCURRENCIES = [1, 8]
const ROUNDS = 3

const logData = (i: number) => ({ message: `request ${i} served`, level: 'info', module: 'bench', fields: { requestId: i, route: '/api/orders' } })

/** What a hand-written client does: build each batch, sign it, post it, wait for the answer; `concurrency` of them at once. */
async function rawIngest(target: Target, concurrency: number): Promise<number> {
  const started = performance.now()
  let next = 0
  const sender = async () => {
    for (let first = next; first < EVENTS_PER_ROUND; first = next) {
      next += BATCH_SIZE
      await postRawBatch(target, first)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, sender))
  return performance.now() - started
}

async function postRawBatch(target: Target, first: number) {
  const events = []
  for (let i = first; i < first + BATCH_SIZE; i++) events.push({ type: 'log', ts: new Date().toISOString(), data: logData(i) })
  const body = JSON.stringify({ events })
  const response = await fetch(`${target.url}/api/ingest`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${target.key}`,
      'content-type': 'application/json',
      'x-service-signature': createHmac('sha256', target.secret).update(body).digest('hex'),
      'x-service-idempotency-key': randomUUID(),
    },
    body,
  })
  const answer = (await response.json()) as { accepted: number }
  if (response.status !== 200 || answer.accepted !== BATCH_SIZE) throw new Error(`raw ingest: ${response.status} ${JSON.stringify(answer)}`)
}

/** An application logging as fast as it can, yielding to the event loop after each batch's worth of calls. */
async function sdkLog(target: Target, concurrency: number): Promise<{ totalMs: number; callMs: number }> {
  const client = new PortalClient({
    baseUrl: target.url,
    apiKey: target.key,
    webhookSecret: target.secret,
    maxBatchEvents: BATCH_SIZE,
    maxConcurrentBatches: concurrency,
    maxQueueSize: EVENTS_PER_ROUND,
  })
  const started = performance.now()
  let callMs = 0
  for (let first = 0; first < EVENTS_PER_ROUND; first += BATCH_SIZE) {
    const callsStarted = performance.now()
    for (let i = first; i < first + BATCH_SIZE; i++) client.log(logData(i))
    callMs += performance.now() - callsStarted
    await yieldToEventLoop()
  }
  await client.close()
  const totalMs = performance.now() - started
  const stats = client.stats()
  if (stats.accepted !== EVENTS_PER_ROUND) throw new Error(`sdk: ${JSON.stringify(stats)}`)
  return { totalMs, callMs }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function run() {
  // The portal runs as its own process, as it does for the application using the SDK: sharing this
  // process's event loop would throttle the application's logging by the portal's own work.
  await withPortal('sqlite', async (target) => {
    await rawIngest(target, 1) // warm-up: JIT, SQLite cache, connection pool
    console.log(`portal: SQLite, its own process; ${ROUNDS} rounds of ${EVENTS_PER_ROUND} log events in batches of ${BATCH_SIZE}; medians`)
    for (const concurrency of CONCURRENCIES) {
      const raw: number[] = []
      const sdk: number[] = []
      const perCall: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        raw.push(EVENTS_PER_ROUND / ((await rawIngest(target, concurrency)) / 1000))
        const measured = await sdkLog(target, concurrency)
        sdk.push(EVENTS_PER_ROUND / (measured.totalMs / 1000))
        perCall.push((measured.callMs * 1000) / EVENTS_PER_ROUND)
      }
      const rawRate = median(raw)
      const sdkRate = median(sdk)
      console.log(`\n${concurrency} batch(es) in flight`)
      console.log(`  raw signed ingest  ${Math.round(rawRate)} events/s   (rounds: ${raw.map(Math.round).join(', ')})`)
      console.log(`  client.log()       ${Math.round(sdkRate)} events/s   (rounds: ${sdk.map(Math.round).join(', ')})`)
      console.log(`  client / raw       ${((sdkRate / rawRate) * 100).toFixed(1)} %   (target >= 80 %)`)
      console.log(`  client.log() call  ${median(perCall).toFixed(2)} µs   (queueing and serialising one event, before any I/O)`)
    }
  })
}
