// Event store candidates for the module event tables on the embedded default (issue 18), on its log
// workload: 1,000,000 log events (level, module, message, two fields) over 30 days, in 100-event
// batches, 16 batches a durable commit (what group commit shares among 16 connections). For each
// candidate: appended events/s and CPU per event, bytes per event of its folder after a clean close,
// and three reads timed in process (no HTTP): newest 50 of one module at level=error, a text search
// over 24 h, counts per level over 7 days. Printed with the bare bound measured in the same run: the
// same events appended as JSON lines to a file, fdatasynced per commit. Read times are wall (CPU) ms.
// The appends run in rounds that interleave the candidates (the machine is shared: noise hits each
// alike); reads interleave too. BENCH_EVENTSTORE_EVENTS (default 1,000,000) scales the event count,
// BENCH_EVENTSTORE_BATCHES_PER_COMMIT (default 16) the commit grouping, BENCH_EVENTSTORE_RUNS (default
// 15) the timed runs per read, BENCH_EVENTSTORE_CANDIDATES (e.g. `duckdb,outbox-duckdb`) narrows the
// candidates, for runs at larger counts.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { duckdb } from './eventstore/duckdb.ts'
import { outboxDuckdb } from './eventstore/outbox-duckdb.ts'
import { sqliteBlocks } from './eventstore/sqlite-blocks.ts'
import { sqliteLean } from './eventstore/sqlite-lean.ts'
import { sqliteToday } from './eventstore/sqlite-today.ts'
import { DAY_MS, END_MS, RARE_WORD, makeEvents, resetWorkload, type BenchEvent, type Candidate, type EventStore, type ReadEvent } from './eventstore/workload.ts'

const EVENTS = Number(process.env.BENCH_EVENTSTORE_EVENTS ?? 1_000_000)
const BATCH_SIZE = 100
const BATCHES_PER_COMMIT = Number(process.env.BENCH_EVENTSTORE_BATCHES_PER_COMMIT ?? 16)
const RUNS = Number(process.env.BENCH_EVENTSTORE_RUNS ?? 15)
const WARMUP_RUNS = 3
const ROUNDS = 10
const slug = (candidate: Candidate) => candidate.name.replace(/\W+/g, '-')
const WANTED = process.env.BENCH_EVENTSTORE_CANDIDATES?.split(',').map((name) => name.trim())
const CANDIDATES: Candidate[] = [sqliteToday, sqliteLean, sqliteBlocks, duckdb, outboxDuckdb].filter((candidate) => !WANTED || WANTED.includes(slug(candidate)))

interface Loading {
  candidate: Candidate
  dir: string
  store: EventStore
  ms: number
  cpuUs: number
  roundRates: number[]
}

const commitsOf = (events: BenchEvent[]) => {
  const commits: BenchEvent[][] = []
  for (let start = 0; start < events.length; start += BATCH_SIZE * BATCHES_PER_COMMIT) commits.push(events.slice(start, start + BATCH_SIZE * BATCHES_PER_COMMIT))
  return commits
}

/** The bare bound: the events as JSON lines appended to one file, fdatasynced at each commit; and how small deflate makes those lines. */
function bareBound(dir: string) {
  const fd = fs.openSync(path.join(dir, 'events.ndjson'), 'a')
  let ms = 0
  let deflatedBytes = 0
  return {
    append(commits: BenchEvent[][]) {
      const started = performance.now()
      for (const events of commits) {
        let lines = ''
        for (const e of events) lines += `{"id":"${e.id}","ts":${e.ts},"receivedAt":${e.receivedAt},"data":${e.dataJson}}\n`
        fs.writeSync(fd, lines)
        fs.fdatasyncSync(fd)
      }
      ms += performance.now() - started
    },
    /** Deflate over a whole round's lines: what a compressor alone makes of this data. */
    measureDeflate(events: BenchEvent[]) {
      const lines = events.map((e) => `{"id":"${e.id}","ts":${e.ts},"receivedAt":${e.receivedAt},"data":${e.dataJson}}\n`).join('')
      deflatedBytes += zlib.deflateRawSync(lines).length
    },
    close() {
      const bytes = fs.fstatSync(fd).size
      fs.closeSync(fd)
      return { ms, bytes, deflatedBytes }
    },
  }
}

function folderBytes(dir: string): number {
  return fs.readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => sum + (entry.isFile() ? fs.statSync(path.join(dir, entry.name)).size : folderBytes(path.join(dir, entry.name))), 0)
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]

/** The three reads; each returns what it found, so that the candidates' answers can be compared. */
function reads(): [name: string, run: (store: EventStore) => Promise<unknown>][] {
  const to = END_MS - 17 * 60_000
  return [
    ['newest 50 module-3 error', async (store) => (await store.newest('module-3', 'error', 50)).map((e: ReadEvent) => e.id)],
    [`search "${RARE_WORD}" 24 h`, async (store) => (await store.search(RARE_WORD, to - DAY_MS, to, 50)).map((e: ReadEvent) => e.id)],
    ['count per level 7 days', async (store) => [...(await store.countLevels(to - 7 * DAY_MS, to))].filter(([, count]) => count > 0).sort()],
  ]
}

export async function run() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-bench-eventstore-'))
  try {
    await benchmark(root)
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

async function benchmark(root: string) {
  console.log(
    `eventstore: ${EVENTS.toLocaleString('en')} log events over 30 days, ${BATCH_SIZE}-event batches, ${BATCHES_PER_COMMIT} batches (${(BATCH_SIZE * BATCHES_PER_COMMIT).toLocaleString('en')} events) a durable commit, one JS thread;` +
      ` appends in ${ROUNDS} rounds interleaving the candidates; reads in process (no HTTP), median of ${RUNS}, interleaved; ${os.cpus().length} CPUs shared with other work`,
  )
  resetWorkload()
  const boundDir = fs.mkdtempSync(path.join(root, 'bound-'))
  const bound = bareBound(boundDir)
  const loadings: Loading[] = []
  for (const candidate of CANDIDATES) {
    const dir = fs.mkdtempSync(path.join(root, `${slug(candidate)}-`))
    loadings.push({ candidate, dir, store: await candidate.open(dir), ms: 0, cpuUs: 0, roundRates: [] })
  }
  const perRound = Math.ceil(EVENTS / ROUNDS)
  for (let round = 0; round < ROUNDS; round++) {
    const events = makeEvents(round * perRound, Math.min(EVENTS, (round + 1) * perRound), EVENTS)
    const commits = commitsOf(events)
    bound.measureDeflate(events)
    bound.append(commits)
    // A different candidate goes first each round, so that none always follows the same one.
    for (let k = 0; k < loadings.length; k++) {
      const loading = loadings[(round + k) % loadings.length]
      const cpu = process.cpuUsage()
      const started = performance.now()
      for (const commit of commits) await loading.store.append(commit)
      const ms = performance.now() - started
      const used = process.cpuUsage(cpu)
      loading.ms += ms
      loading.cpuUs += used.user + used.system
      loading.roundRates.push((events.length / ms) * 1000)
    }
  }
  const boundResult = bound.close()

  const sizes = new Map<Loading, number>()
  for (const loading of loadings) {
    await loading.store.close()
    sizes.set(loading, folderBytes(loading.dir))
    loading.store = await loading.candidate.open(loading.dir)
  }

  const timed = reads()
  const times = new Map<string, number[]>()
  const cpuTimes = new Map<string, number[]>()
  const answers = new Map<string, string>()
  const disagreements: string[] = []
  for (let runIndex = 0; runIndex < WARMUP_RUNS + RUNS; runIndex++) {
    for (const [name, read] of timed) {
      for (let k = 0; k < loadings.length; k++) {
        const loading = loadings[(runIndex + k) % loadings.length]
        const cpu = process.cpuUsage()
        const started = performance.now()
        const answer = JSON.stringify(await read(loading.store))
        const ms = performance.now() - started
        const used = process.cpuUsage(cpu)
        const key = `${loading.candidate.name} ${name}`
        if (runIndex >= WARMUP_RUNS) {
          times.set(key, [...(times.get(key) ?? []), ms])
          cpuTimes.set(key, [...(cpuTimes.get(key) ?? []), (used.user + used.system) / 1000])
        }
        const first = answers.get(name)
        if (first === undefined) answers.set(name, answer)
        else if (first !== answer && runIndex === 0) disagreements.push(`${loading.candidate.name}: ${name}`)
      }
    }
  }
  for (const loading of loadings) await loading.store.close()

  const rate = (events: number, ms: number) => Math.round((events / ms) * 1000).toLocaleString('en')
  const header = ['candidate'.padEnd(18), 'append ev/s'.padStart(11), 'rounds min–max'.padStart(17), 'CPU µs/ev'.padStart(9), 'B/event'.padStart(8), ...timed.map(([name]) => `${name} (CPU)`.padStart(34))]
  console.log(header.join('  '))
  for (const loading of loadings) {
    const min = Math.round(Math.min(...loading.roundRates)).toLocaleString('en')
    const max = Math.round(Math.max(...loading.roundRates)).toLocaleString('en')
    const cells = [
      loading.candidate.name.padEnd(18),
      rate(EVENTS, loading.ms).padStart(11),
      `${min}–${max}`.padStart(17),
      (loading.cpuUs / EVENTS).toFixed(1).padStart(9),
      (sizes.get(loading)! / EVENTS).toFixed(1).padStart(8),
      ...timed.map(([name]) => {
        const key = `${loading.candidate.name} ${name}`
        return `${median(times.get(key)!).toFixed(1)} ms (${median(cpuTimes.get(key)!).toFixed(1)})`.padStart(34)
      }),
    ]
    console.log(cells.join('  '))
  }
  console.log(
    `${'bare bound'.padEnd(18)}  ${rate(EVENTS, boundResult.ms).padStart(11)}  JSON lines appended and fdatasynced per commit: ${(boundResult.bytes / EVENTS).toFixed(1)} B/event; deflated per round: ${(boundResult.deflatedBytes / EVENTS).toFixed(1)} B/event`,
  )
  for (const loading of loadings) console.log(`  ${loading.candidate.name}: ${loading.candidate.layout}`)
  console.log(disagreements.length === 0 ? '  every candidate gave the same answers to the three reads' : `  ANSWERS DIFFER from ${CANDIDATES[0].name}: ${disagreements.join('; ')}`)
}
