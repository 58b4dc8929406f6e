// A load generator in a process of its own, so that the portal's CPU is not shared with the client's in the
// same event loop. It builds and signs every body before the clock starts (realistic logs, see
// workload/realistic-logs.ts), then sends them over keep-alive connections with a new idempotency key each,
// as the SDK does. With a rate, requests are due on a fixed schedule and latency counts from when each was
// due, so a stalled server is not hidden by the client waiting for it (no coordinated omission).
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { Pool } from 'undici'
import { hmacSha256Hex } from '../src/identity/secrets.ts'
import { realisticLogs } from './workload/realistic-logs.ts'

export interface LoadOptions {
  url: string
  key: string
  secret: string
  seconds: number
  connections?: number
  batchSize?: number
  /** distinct bodies built before the run and sent in turn; each holds `batchSize` events of its own */
  bodies?: number
  /** requests per second offered on a fixed schedule; without it, as fast as the connections go */
  requestsPerSecond?: number
  seed?: number
}

export interface LoadResult {
  eventsPerSecond: number
  requests: number
  non2xx: number
  errors: number
  p50: number
  p99: number
  /** the target process's CPU (all its threads) per accepted event, in µs, when its pid was given */
  cpuMicrosPerEvent?: number
  /** the target process's peak resident memory (VmHWM) at the end, in MiB, when its pid was given */
  peakRssMiB?: number
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100

/** CPU seconds a process has used so far, user and system, every thread of it. */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

export function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Math.round(Number(match[1]) / 1024) : NaN
}

/** Runs one load against `url`'s `/api/ingest` from a child process; `targetPid` adds the target's CPU per event. */
export async function runLoad(options: LoadOptions, targetPid?: number): Promise<LoadResult> {
  const child = fork(import.meta.filename, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  try {
    const message = <T>() => new Promise<T>((resolve, reject) => {
      child.once('message', (value) => resolve(value as T))
      child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)))
    })
    child.send(options)
    await message<'ready'>()
    const cpuBefore = targetPid === undefined ? 0 : cpuSeconds(targetPid)
    child.send('go')
    const result = await message<LoadResult>()
    if (targetPid !== undefined) {
      const accepted = result.eventsPerSecond * options.seconds
      result.cpuMicrosPerEvent = accepted > 0 ? ((cpuSeconds(targetPid) - cpuBefore) * 1e6) / accepted : NaN
      result.peakRssMiB = peakRssMiB(targetPid)
    }
    return result
  } finally {
    child.kill('SIGKILL')
  }
}

function buildBodies({ key, secret, bodies = 2000, batchSize = 100, seed = 1 }: LoadOptions) {
  const total = bodies * batchSize
  return Array.from({ length: bodies }, (_, i) => {
    const body = JSON.stringify({ events: realisticLogs(batchSize, { seed, first: i * batchSize, total }) })
    return { body, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-service-signature': hmacSha256Hex(secret, body) } }
  })
}

async function generate(options: LoadOptions, go: Promise<unknown>): Promise<LoadResult> {
  const prepared = buildBodies(options)
  const connections = options.connections ?? 16
  const pool = new Pool(options.url, { connections, pipelining: 1 })
  process.send!('ready')
  await go
  const latencies: number[] = []
  let next = 0
  let ok = 0
  let non2xx = 0
  let errors = 0
  const started = performance.now()
  const deadline = started + options.seconds * 1000
  const interval = options.requestsPerSecond ? 1000 / options.requestsPerSecond : 0
  const worker = async () => {
    while (performance.now() < deadline) {
      const index = next++
      const due = started + index * interval
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()))
      if (due >= deadline) return
      const { body, headers } = prepared[index % prepared.length]
      const sentAt = interval ? due : performance.now()
      try {
        const response = await pool.request({ path: '/api/ingest', method: 'POST', body, headers: { ...headers, 'x-service-idempotency-key': randomUUID() } })
        await response.body.dump()
        if (response.statusCode >= 200 && response.statusCode < 300) ok++
        else non2xx++
      } catch {
        errors++
      }
      latencies.push(performance.now() - sentAt)
    }
  }
  await Promise.all(Array.from({ length: connections }, worker))
  const seconds = (performance.now() - started) / 1000
  await pool.close()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN)
  return { eventsPerSecond: Math.round((ok * (options.batchSize ?? 100)) / seconds), requests: latencies.length, non2xx, errors, p50: at(0.5), p99: at(0.99) }
}

if (process.send && process.argv[1] === import.meta.filename) {
  process.once('message', (options: LoadOptions) => {
    const go = new Promise((resolve) => process.once('message', resolve))
    generate(options, go).then((result) => process.send!(result), (error) => {
      console.error(error)
      process.exit(1)
    })
  })
}
