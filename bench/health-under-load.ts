// `npm run bench -- health-under-load`: how long health takes to answer while 20 connections each send 5 MB
// batches of realistic logs (about 19,000 events each) as fast as they are answered, with the portal's default
// limits, which refuse most of them (429) or shed them (503). A load balancer's probe times out at 1 s: the
// target is every answer under 1 s. Beside it, the bound measured in the same run: health on the idle portal.
// The portal and the load generator are processes of their own; loopback only; bounded by BENCH_SECONDS.
import { createTestDatabase } from '../test/support/portal.ts'
import { killPortal, spawnPortal } from '../test/support/process.ts'
import { runLoad } from './load-generator.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
const CONNECTIONS = 20
const EVENTS_PER_BATCH = 19_000
const TARGET_MS = 1000
const ADMIN = `pat_${'h'.repeat(40)}`

/** Health polled every 100 ms until `done` settles: each answer's status and milliseconds. */
async function pollHealth(url: string, done: Promise<unknown>) {
  const answers: { status: number; ms: number }[] = []
  let finished = false
  void done.finally(() => (finished = true))
  while (!finished) {
    const started = performance.now()
    let status = 0
    try {
      status = (await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(10_000) })).status
    } catch {
      // a timeout or a refused connection: counted as status 0 with the time it took
    }
    answers.push({ status, ms: performance.now() - started })
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return answers
}

function summary(answers: { status: number; ms: number }[]) {
  const ms = answers.map((answer) => answer.ms).sort((a, b) => a - b)
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(0)
  const counts = new Map<number, number>()
  for (const { status } of answers) counts.set(status, (counts.get(status) ?? 0) + 1)
  const statuses = [...counts].map(([status, count]) => `${status}×${count}`).join(' ')
  return { text: `${answers.length} polls, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms, ${ms.filter((m) => m >= TARGET_MS).length} at or over ${TARGET_MS} ms; statuses ${statuses}`, max: ms.at(-1)! }
}

export async function run() {
  for (const dialect of (process.env.BENCH_HEALTH_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as ('sqlite' | 'postgres')[]) {
    const database = await createTestDatabase(dialect)
    const portal = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, LOG_LEVEL: 'warn' })
    try {
      const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
      const project = await (await fetch(`${portal.url}/api/projects`, { method: 'POST', headers, body: '{"name":"health"}' })).json()
      const key = await (await fetch(`${portal.url}/api/projects/${project.id}/keys`, { method: 'POST', headers, body: '{}' })).json()
      const idle = summary(await pollHealth(portal.url, new Promise((resolve) => setTimeout(resolve, 3000))))
      const load = runLoad({ url: portal.url, key: key.key, secret: key.webhookSecret, seconds: SECONDS, connections: CONNECTIONS, batchSize: EVENTS_PER_BATCH, bodies: CONNECTIONS }, portal.child.pid!)
      const loaded = summary(await pollHealth(portal.url, load))
      const batches = await load
      console.log(`health-under-load ${dialect}: ${CONNECTIONS} connections of ${EVENTS_PER_BATCH.toLocaleString('en')}-event (5 MB) batches for ${SECONDS} s, default limits`)
      console.log(`  batches: ${batches.requests} sent, ${batches.requests - batches.non2xx - batches.errors} accepted, ${batches.non2xx} refused (429/503), ${batches.errors} connection errors; peak RSS ${batches.peakRssMiB} MiB`)
      console.log(`  health under that load: ${loaded.text}`)
      console.log(`  bound, health on the idle portal: ${idle.text}`)
      console.log(`  target: every answer under ${TARGET_MS} ms: ${loaded.max < TARGET_MS ? 'met' : 'NOT met'}`)
    } finally {
      await killPortal(portal, 'SIGTERM')
      await database.drop()
    }
  }
}
