import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import { createProject, createTestDatabase, DIALECTS, event, ingest, requester, type PortalClient, type TestDatabase } from '../support/portal.ts'
import { killPortal, spawnPortal, type PortalProcess } from '../support/process.ts'
import { connectRaw, type RawConnection } from './support/raw-http.ts'

const ADMIN = `pat_${'f'.repeat(32)}`
/**
 * A probe gives up after this long. Load balancers wait a second or two; on a loaded shared test
 * machine a probe behind a flood can take longer, so the latencies are reported, not asserted.
 */
const PROBE_TIMEOUT_MS = 10_000
/** The smallest usual default: a cap (940) not much above the listen backlog (511), so that one burst of accepts fills most of it. */
const DESCRIPTOR_LIMIT = 1024
/** The reserve is 64 + DATABASE_POOL_SIZE + WEBHOOK_CONCURRENCY (src/http/connections.ts). */
const SMALL_RESERVE_ENV = { DATABASE_POOL_SIZE: '4', WEBHOOK_CONCURRENCY: '16' }
const DERIVED_CAP = DESCRIPTOR_LIMIT - (64 + 4 + 16)
const IDLE_CONNECTIONS = 1500
const ATTACK_MS = 4000

async function spawnLimited(dialect: 'sqlite' | 'postgres', database: TestDatabase, env: Record<string, string>): Promise<PortalProcess> {
  return spawnPortal(
    { DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN, LOG_LEVEL: 'info', ...SMALL_RESERVE_ENV, ...env },
    { launcher: ['prlimit', `--nofile=${DESCRIPTOR_LIMIT}`], timeoutMs: 120_000 },
  )
}

type Probe = { status: number | 'timeout' | 'refused'; ms: number }

// The probe loop runs on a thread of its own: this process's own attack (bursts of connects, reads of /proc)
// stalls its event loop, which would otherwise count in a probe's time as the portal's.
const PROBE_THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const { url, everyMs, timeoutMs } = workerData
let running = true
parentPort.once('message', () => (running = false))
;(async () => {
  const probes = []
  while (running) {
    const startedAt = performance.now()
    try {
      const response = await fetch(url + '/api/health', { headers: { connection: 'close' }, signal: AbortSignal.timeout(timeoutMs) })
      await response.arrayBuffer()
      probes.push({ status: response.status, ms: performance.now() - startedAt })
    } catch (error) {
      probes.push({ status: error.name === 'TimeoutError' ? 'timeout' : 'refused', ms: performance.now() - startedAt })
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  parentPort.postMessage(probes)
})()
`

/** Probes health as a load balancer does, on a fresh connection, every `everyMs` while `running()`: statuses and latencies. */
async function probeHealth(url: string, everyMs: number, running: () => boolean): Promise<Probe[]> {
  const thread = new Worker(PROBE_THREAD, { eval: true, workerData: { url, everyMs, timeoutMs: PROBE_TIMEOUT_MS } })
  const probes = new Promise<Probe[]>((resolve, reject) => {
    thread.once('message', resolve)
    thread.once('error', reject)
  })
  while (running()) await sleep(50)
  thread.postMessage('stop')
  try {
    return await probes
  } finally {
    await thread.terminate()
  }
}

/** The portal process's open descriptors, and how many of them are sockets, from /proc. */
function descriptorsOf(portal: PortalProcess) {
  const entries = fs.readdirSync(`/proc/${portal.child.pid}/fd`).map((fd) => {
    try {
      return fs.readlinkSync(`/proc/${portal.child.pid}/fd/${fd}`)
    } catch {
      return '' // closed meanwhile
    }
  })
  return { all: entries.length, sockets: entries.filter((target) => target.startsWith('socket:')).length }
}

/**
 * Keeps `count` connections open that never send a byte, opening a new one for each the portal closes,
 * for `forMs`; reports how many were opened and the most descriptors the portal held meanwhile.
 */
async function holdIdleConnections(portal: PortalProcess, count: number, forMs: number, reached: (held: { all: number; sockets: number }) => boolean) {
  const url = portal.url
  const startedAt = performance.now()
  let done = false
  const open = new Set<RawConnection>()
  let opened = 0
  let mostDescriptors = 0
  let mostSockets = 0
  const openOne = () => {
    const connection = connectRaw(url)
    opened++
    open.add(connection)
    void connection.closed.then(() => open.delete(connection))
  }
  // At least `forMs`, and on a loaded machine until the portal holds what the attack aims at (at most 30 s).
  while ((performance.now() - startedAt < forMs || !done) && performance.now() - startedAt < 30_000) {
    while (open.size < count && opened < count * 10) openOne()
    await sleep(200)
    const held = descriptorsOf(portal)
    mostDescriptors = Math.max(mostDescriptors, held.all)
    mostSockets = Math.max(mostSockets, held.sockets)
    done ||= reached(held)
  }
  for (const connection of open) connection.socket.destroy()
  return { opened, mostDescriptors, mostSockets }
}

/** The backlog of the portal's listening socket, as `ss` reports it (Send-Q of a listening socket). */
function listenBacklogOf(portal: PortalProcess): number {
  const port = new URL(portal.url).port
  const line = execFileSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' }).trim()
  return Number(line.split(/\s+/)[2])
}

function assertStillRunning(portal: PortalProcess) {
  assert.equal(portal.child.exitCode, null, `the portal is still running: ${portal.output().slice(-2000)}`)
  assert.doesNotMatch(portal.output(), /uncaught|EMFILE.*uv_resident_set_memory/i)
}

for (const dialect of DIALECTS) {
  describe(`descriptor exhaustion on ${dialect}, under prlimit --nofile=${DESCRIPTOR_LIMIT}`, () => {
    test(`${IDLE_CONNECTIONS} idle connections: the portal caps them below its descriptor limit, stays up, and health answers throughout`, { timeout: 240_000 }, async (t) => {
      const database = await createTestDatabase(dialect)
      // Idle connections must meet the cap, not their headers timeout, during the attack.
      const portal = await spawnLimited(dialect, database, { HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '30000' })
      try {
        const capLine = portal.output().match(/"maxConnections":(\d+)/)
        assert.equal(Number(capLine?.[1]), DERIVED_CAP, 'the cap is derived from the real descriptor limit')
        // A connect past the backlog is dropped, and resent a second later: a probe among the attack's bursts must not be.
        const somaxconn = Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8'))
        assert.equal(listenBacklogOf(portal), Math.min(somaxconn, 65_535), 'the portal listens with the largest backlog the kernel allows')
        let attacking = true
        const probes = probeHealth(portal.url, 250, () => attacking)
        const attack = await holdIdleConnections(portal, IDLE_CONNECTIONS, ATTACK_MS, (held) => held.sockets >= DERIVED_CAP)
        attacking = false
        const answered = await probes
        const slowest = Math.round(Math.max(...answered.map((probe) => probe.ms)))
        t.diagnostic(`${attack.opened} idle connections opened, the portal held at most ${attack.mostSockets} sockets and ${attack.mostDescriptors} descriptors (cap ${DERIVED_CAP}); ${answered.length} health probes, slowest ${slowest} ms`)
        assertStillRunning(portal)
        // The cap, plus the listening socket, the database's and a probe or two in flight.
        assert.ok(attack.mostSockets <= DERIVED_CAP + 10, `the portal held ${attack.mostSockets} sockets at most (${attack.opened} connections opened)`)
        assert.ok(attack.mostDescriptors < DESCRIPTOR_LIMIT, `the portal held ${attack.mostDescriptors} descriptors at most`)
        // A probe is accepted in the attacker's bursts, and read a turn of the event loop later: the
        // cap closes the longest idle connection among those read at least once, never the probe. Only
        // when every held connection was accepted in the same burst is the newcomer refused: that can
        // catch a probe once, at the attack's start, and the probe learns it at once, never hangs.
        const refused = answered.filter((probe) => probe.status !== 200)
        assert.ok(refused.length <= 1 && refused.every((probe) => probe.status === 'refused'), `probes not answered 200: ${JSON.stringify(refused)}`)
        assert.ok(answered.every((probe) => probe.ms < 1000), `every probe settled within a second (slowest ${slowest} ms)`)
        assert.equal((await fetch(`${portal.url}/api/health`)).status, 200)
      } finally {
        await killPortal(portal)
        await database.drop()
      }
    })

    test('with HTTP_MAX_CONNECTIONS above the descriptor limit, the portal survives running out of descriptors, and health answers as soon as the idle connections go', { timeout: 240_000 }, async (t) => {
      const database = await createTestDatabase(dialect)
      const portal = await spawnLimited(dialect, database, { HTTP_MAX_CONNECTIONS: '5000', HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '30000' })
      try {
        const attack = await holdIdleConnections(portal, IDLE_CONNECTIONS, ATTACK_MS, (held) => held.all >= DESCRIPTOR_LIMIT - 2)
        const leftAt = performance.now()
        assertStillRunning(portal)
        // Neither the cap nor a timeout stopped them: the descriptor limit did.
        assert.ok(attack.mostDescriptors >= DESCRIPTOR_LIMIT - 2, `the descriptors ran out: ${attack.mostDescriptors} held at most, ${attack.opened} connections opened`)
        let health: number | undefined
        while (performance.now() - leftAt < 5_000 && health !== 200) {
          health = await fetch(`${portal.url}/api/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).then(
            (response) => response.status,
            () => undefined,
          )
        }
        const healedMs = Math.round(performance.now() - leftAt)
        assert.equal(health, 200, 'health answers again once the attacker has gone')
        const client: PortalClient = { request: requester(portal.url), adminToken: ADMIN }
        const project = await createProject(client)
        assert.equal((await ingest(client, project, [event('log', { message: 'after the flood' })])).status, 200)
        assertStillRunning(portal)
        t.diagnostic(`${attack.opened} idle connections opened, the portal held at most ${attack.mostDescriptors} descriptors; health answered ${healedMs} ms after they went`)
      } finally {
        await killPortal(portal)
        await database.drop()
      }
    })
  })

  describe(`health flood on ${dialect}`, () => {
    test('four connections pipelining health: every load-balancer probe answers 200, and ingest keeps answering 200', { timeout: 240_000 }, async (t) => {
      const database = await createTestDatabase(dialect)
      const portal = await spawnPortal({ DATABASE_URL: database.url, PORTAL_DATA_DIR: database.dataDir, PORTAL_BOOTSTRAP_TOKEN: ADMIN }, { timeoutMs: 120_000 })
      try {
        const client: PortalClient = { request: requester(portal.url), adminToken: ADMIN }
        const project = await createProject(client)
        let flooding = true
        const request = 'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        let floodAnswers = 0
        const flood = Array.from({ length: 4 }, async () => {
          const connection = connectRaw(portal.url)
          let received = 0
          connection.socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1').split('HTTP/1.1 200').length - 1))
          // Up to 200 requests ahead of their answers, as fast as the portal answers them.
          let sent = 0
          while (flooding && !connection.isClosed()) {
            if (sent - received < 200) {
              await connection.send(request.repeat(50))
              sent += 50
            } else await sleep(1)
          }
          floodAnswers += received
          connection.socket.destroy()
        })
        const probes = probeHealth(portal.url, 250, () => flooding)
        const ingests: { status: number; ms: number }[] = []
        const until = performance.now() + ATTACK_MS
        while (performance.now() < until) {
          const startedAt = performance.now()
          const answer = await ingest(client, project, [event('log', { message: 'during the flood' })], {}, { timeoutMs: 5000 })
          ingests.push({ status: answer.status, ms: performance.now() - startedAt })
          await sleep(100)
        }
        flooding = false
        await Promise.all(flood)
        const answered = await probes
        const slowest = (list: { ms: number }[]) => Math.round(Math.max(...list.map((item) => item.ms)))
        t.diagnostic(`health flood on ${dialect}: ${floodAnswers} flood answers in ${ATTACK_MS} ms; ${answered.length} probes, slowest ${slowest(answered)} ms; ${ingests.length} ingests, slowest ${slowest(ingests)} ms`)
        assertStillRunning(portal)
        assert.ok(floodAnswers > 1000, `the flood was answered (${floodAnswers} health answers)`)
        assert.deepEqual(
          answered.filter((probe) => probe.status !== 200),
          [],
          'every probe answered 200',
        )
        assert.deepEqual(
          ingests.filter((answer) => answer.status !== 200),
          [],
          'every ingest during the flood was stored',
        )
      } finally {
        await killPortal(portal)
        await database.drop()
      }
    })
  })
}
