// Each hand-written part against the maintained library that does the same job (issue 43), in one process:
// webhook signing vs standardwebhooks, the ingest token buckets (memory and Redis) vs rate-limiter-flexible,
// the event-loop load shedding vs @fastify/under-pressure, the migration runner vs Kysely's Migrator.
// Micro-benchmarks: operations per second of the same work, best of three one-second rounds. Redis on loopback.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Fastify from 'fastify'
import underPressure from '@fastify/under-pressure'
import { Redis } from 'ioredis'
import { Migrator, type Kysely } from 'kysely'
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible'
import { Webhook } from 'standardwebhooks'
import { overloaded, eventLoopDelaySampler } from '../src/http/load-shedding.ts'
import { createMemoryRateLimiter } from '../src/ingest/rate-limit.ts'
import { createRedisRateLimiter } from '../src/ingest/redis-rate-limit.ts'
import { allMigrations } from '../src/portal.ts'
import { migrate } from '../src/storage/migrations.ts'
import { openStorage } from '../src/storage/open-storage.ts'
import { newEndpointSecret, standardWebhookSignature } from '../src/webhooks/signing.ts'

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const silent = { warn() {}, info() {}, error() {} } as never

/** Operations per second of `operation`, best of three one-second rounds (after a warm-up). */
async function rate(operation: () => unknown): Promise<number> {
  let best = 0
  for (let round = 0; round < 4; round++) {
    const start = performance.now()
    let n = 0
    while (performance.now() - start < 1000) {
      await operation()
      n++
    }
    if (round > 0) best = Math.max(best, n / ((performance.now() - start) / 1000))
  }
  return Math.round(best)
}

const line = (what: string, ours: number, library: number, unit = 'ops/s') =>
  console.log(`${what}: ours ${ours.toLocaleString('en')} ${unit}, library ${library.toLocaleString('en')} ${unit} (${(ours / library).toFixed(2)}×)`)

async function signing() {
  const secret = newEndpointSecret()
  const body = JSON.stringify({ type: 'error.group.created', data: { fingerprint: 'a'.repeat(64), message: 'payment failed '.repeat(20) } })
  const webhook = new Webhook(secret)
  const timestamp = Math.floor(Date.now() / 1000)
  if (standardWebhookSignature([secret], 'msg_1', timestamp, body) !== webhook.sign('msg_1', new Date(timestamp * 1000), body)) throw new Error('signatures differ')
  line('webhook signing, one secret, 1 KB body', await rate(() => standardWebhookSignature([secret], 'msg_1', timestamp, body)), await rate(() => webhook.sign('msg_1', new Date(timestamp * 1000), body)))
}

async function rateLimits() {
  const ours = createMemoryRateLimiter(1e9)
  // rate-limiter-flexible takes one limit per limiter: events and batches are two, as ours are two buckets.
  const events = new RateLimiterMemory({ points: 1e12, duration: 1 })
  const batches = new RateLimiterMemory({ points: 1e12, duration: 1 })
  let i = 0
  line('memory buckets, 100-event batch on one of 1,000 projects', await rate(() => ours.take(`prj_${i++ % 1000}`, 100, 1e9)), await rate(() => Promise.all([events.consume(`prj_${i % 1000}`, 100), batches.consume(`prj_${i++ % 1000}`, 1)])))
  const redisOurs = createRedisRateLimiter(REDIS_URL, 1e9, silent, 1000)
  const client = new Redis(REDIS_URL)
  const redisEvents = new RateLimiterRedis({ storeClient: client, points: 1e12, duration: 1, keyPrefix: 'bench-events' })
  const redisBatches = new RateLimiterRedis({ storeClient: client, points: 1e12, duration: 1, keyPrefix: 'bench-batches' })
  if (redisOurs.redis.status !== 'ready') await new Promise((resolve) => redisOurs.redis.once('ready', resolve))
  line('Redis buckets, same', await rate(() => redisOurs.take(`prj_${i++ % 1000}`, 100, 1e9)), await rate(() => Promise.all([redisEvents.consume(`prj_${i % 1000}`, 100), redisBatches.consume(`prj_${i++ % 1000}`, 1)])))
  await redisOurs.close()
  client.disconnect()
}

async function loadShedding() {
  const app = async (shed: 'ours' | 'library') => {
    const server = Fastify()
    if (shed === 'library') await server.register(underPressure, { maxEventLoopDelay: 1000, sampleInterval: 500, retryAfter: 1 })
    else {
      const sampler = eventLoopDelaySampler(500)
      server.addHook('onClose', async () => sampler.stop())
      server.addHook('onRequest', async (request) => {
        if (request.routeOptions.url === '/api/health') return
        if (sampler.delayMs() > 1000) throw overloaded('event loop', 1)
      })
    }
    server.get('/api/x', async () => ({ ok: true }))
    await server.ready()
    return server
  }
  const [ours, library] = [await app('ours'), await app('library')]
  // each measured twice, in turns: the first rounds of a process run slower (JIT), whichever goes first
  const [ours1, library1, ours2, library2] = [await rate(() => ours.inject('/api/x')), await rate(() => library.inject('/api/x')), await rate(() => ours.inject('/api/x')), await rate(() => library.inject('/api/x'))]
  line('load shedding, a GET through fastify.inject', Math.max(ours1, ours2), Math.max(library1, library2), 'requests/s')
  await ours.close()
  await library.close()
}

async function migrations() {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-migrations-'))
  const options = { poolSize: 1, queryTimeoutMs: 10_000, sqliteSynchronous: 'normal' as const, columnarTables: [] }
  const time = async (run: (storage: Awaited<ReturnType<typeof openStorage>>) => Promise<unknown>, file: string) => {
    const storage = await openStorage(`sqlite:${path.join(folder, file)}`, options)
    const start = performance.now()
    await run(storage)
    const ms = performance.now() - start
    await storage.close()
    return ms
  }
  const rounds = 5
  let ours = Infinity
  let library = Infinity
  let failure = ''
  for (let round = 0; round < rounds; round++) {
    ours = Math.min(ours, await time((storage) => migrate(storage, allMigrations), `ours-${round}.db`))
    library = Math.min(library, await time(async (storage) => {
      // Kysely's Migrator runs migrations in the order of their names, not of the list
      const migrator = new Migrator({
        db: storage.db as unknown as Kysely<any>,
        allowUnorderedMigrations: true,
        provider: { getMigrations: async () => Object.fromEntries(allMigrations.map((migration) => [migration.name, { up: (db: Kysely<any>) => migration.up(db, storage.types) }])) },
      })
      const { error } = await migrator.migrateToLatest()
      if (error) failure = String(error)
    }, `library-${round}.db`))
  }
  fs.rmSync(folder, { recursive: true, force: true })
  console.log(`migrations, ${allMigrations.length} on a new SQLite file: ours ${ours.toFixed(0)} ms, Kysely Migrator ${library.toFixed(0)} ms${failure ? ` (and it failed: ${failure})` : ''}`)
}

export async function run() {
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, Node.js ${process.version}, load ${os.loadavg()[0].toFixed(1)}`)
  await signing()
  await rateLimits()
  await loadShedding()
  await migrations()
}
