// `npm run bench -- sdk`: events per second of client.log() into a running portal, and the client's
// cost per call, against raw signed ingest of the same events in batches of the same size.
import { createHmac, randomUUID } from 'node:crypto'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { PortalClient } from '../sdk/src/index.ts'
import { createProject, startTestPortal, type TestPortal, type TestProject } from '../test/support/portal.ts'

const EVENTS_PER_ROUND = 10_000
// 100 is the largest batch of the raw ingest benchmark (bench/ingest.ts); 1 and 8 batches in flight.
const BATCH_SIZE = 100
const CONCURRENCIES = [1, 8]
const ROUNDS = 3

// The rate limit and load shedding are raised out of the way: the subject is the client, not the limiter.
const PORTAL_ENV = {
  INGEST_RATE_LIMIT_EVENTS_PER_SECOND: '1000000000',
  INGEST_RATE_LIMIT_BATCHES_PER_SECOND: '1000000000',
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
  LOG_LEVEL: 'warn',
}

const logData = (i: number) => ({ message: `request ${i} served`, level: 'info', module: 'bench', fields: { requestId: i, route: '/api/orders' } })

/** What a hand-written client does: build each batch, sign it, post it, wait for the answer; `concurrency` of them at once. */
async function rawIngest(t: TestPortal, project: TestProject, concurrency: number): Promise<number> {
  const started = performance.now()
  let next = 0
  const sender = async () => {
    for (let first = next; first < EVENTS_PER_ROUND; first = next) {
      next += BATCH_SIZE
      await postRawBatch(t, project, first)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, sender))
  return performance.now() - started
}

async function postRawBatch(t: TestPortal, project: TestProject, first: number) {
  const events = []
  for (let i = first; i < first + BATCH_SIZE; i++) events.push({ type: 'log', ts: new Date().toISOString(), data: logData(i) })
  const body = JSON.stringify({ events })
  const response = await fetch(`${t.url}/api/ingest`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${project.key}`,
      'content-type': 'application/json',
      'x-service-signature': createHmac('sha256', project.webhookSecret).update(body).digest('hex'),
      'x-service-idempotency-key': randomUUID(),
    },
    body,
  })
  const answer = (await response.json()) as { accepted: number }
  if (response.status !== 200 || answer.accepted !== BATCH_SIZE) throw new Error(`raw ingest: ${response.status} ${JSON.stringify(answer)}`)
}

/** An application logging as fast as it can, yielding to the event loop after each batch's worth of calls. */
async function sdkLog(t: TestPortal, project: TestProject, concurrency: number): Promise<{ totalMs: number; callMs: number }> {
  const client = new PortalClient({
    baseUrl: t.url,
    apiKey: project.key,
    webhookSecret: project.webhookSecret,
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
  const t = await startTestPortal('sqlite', PORTAL_ENV)
  try {
    const project = await createProject(t)
    await rawIngest(t, project, 1) // warm-up: JIT, SQLite cache, connection pool
    console.log(`portal: SQLite, in this process; ${ROUNDS} rounds of ${EVENTS_PER_ROUND} log events in batches of ${BATCH_SIZE}; medians`)
    for (const concurrency of CONCURRENCIES) {
      const raw: number[] = []
      const sdk: number[] = []
      const perCall: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        raw.push(EVENTS_PER_ROUND / ((await rawIngest(t, project, concurrency)) / 1000))
        const measured = await sdkLog(t, project, concurrency)
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
  } finally {
    await t.close()
  }
}
