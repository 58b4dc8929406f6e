// The issue-18 log workload: log events with level, module, message and two fields, over 30 days in
// time order, written in 100-event batches; and the interface each candidate store implements.
import { newEventId } from '../../src/ids.ts'

export const PROJECT_ID = 'prj_01kbench0000000000000000'
export const DAY_MS = 86_400_000
export const HOUR_MS = 3_600_000
export const END_MS = Date.UTC(2026, 10, 15)
export const START_MS = END_MS - 30 * DAY_MS
/** The word the text search looks for: in about 0.5 % of messages. */
export const RARE_WORD = 'deadlock'

export interface LogData {
  level?: string
  message: string
  module?: string
  fields?: Record<string, unknown>
  [key: string]: unknown
}

export interface BenchEvent {
  id: string
  ts: number
  receivedAt: number
  data: LogData
  dataJson: string
}

/** A stored event as the module reads return it (project is implied: one project here). */
export interface ReadEvent {
  id: string
  ts: number
  receivedAt: number
  data: LogData
}

export interface EventStore {
  /** Appends the events of several batches in one transaction, durable (fsynced) when it resolves. */
  append(events: BenchEvent[]): Promise<void>
  /** Newest first: `limit` events of `module` at `level`. */
  newest(module: string, level: string, limit: number): Promise<ReadEvent[]>
  /** Newest first: `limit` events in [from, to) whose message contains `text`, ignoring case. */
  search(text: string, from: number, to: number, limit: number): Promise<ReadEvent[]>
  /** Events per level in [from, to). */
  countLevels(from: number, to: number): Promise<Map<string | null, number>>
  close(): Promise<void>
}

export interface Candidate {
  name: string
  /** One line: what is stored, how. */
  layout: string
  /** Opens the store in `dir` (creating it on first open). */
  open(dir: string): Promise<EventStore>
}

// A seeded generator, so that every run writes the same events (ids aside).
let randomState = 1
function random(): number {
  randomState = (randomState * 1_103_515_245 + 12_345) % 2_147_483_648
  return randomState / 2_147_483_648
}
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]

const LEVELS = ['info', 'info', 'info', 'info', 'debug', 'debug', 'warn', 'error', 'trace', 'fatal']
const WORDS = ['order', 'payment', 'user', 'cache', 'timeout', 'retry', 'created', 'failed', 'queued', 'shipped', 'refund', 'login']

export function resetWorkload() {
  randomState = 1
}

/** Events `from` to `to` (exclusive) of `total`, spread in time order over the 30 days. */
export function makeEvents(from: number, to: number, total: number): BenchEvent[] {
  const events: BenchEvent[] = []
  for (let i = from; i < to; i++) {
    const ts = START_MS + Math.floor((i / total) * 30 * DAY_MS)
    const receivedAt = ts + 40 + (i % 200)
    const rare = random() < 0.005 ? ` ${RARE_WORD} detected` : ''
    const data: LogData = {
      level: pick(LEVELS),
      message: `${pick(WORDS)} ${pick(WORDS)} ${i % 9973} ${pick(WORDS)}${rare}`,
      module: `module-${i % 20}`,
      fields: { requestId: `req-${i % 50_000}`, userId: i % 1000 },
    }
    events.push({ id: newEventId(receivedAt), ts, receivedAt, data, dataJson: JSON.stringify(data) })
  }
  return events
}

/** Newest first, as every read pages: by time, then id. */
export function newestFirst(a: { ts: number; id: string }, b: { ts: number; id: string }): number {
  return b.ts - a.ts || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
}

/**
 * Counts per level in [from, to) as the portal's logs module does: whole hours from hourly counts kept
 * at ingest, the partial hours at either end from the events.
 */
export async function countLevelsByHours(
  from: number,
  to: number,
  countHours: (fromHour: number, toHour: number) => Iterable<{ level: string | null; count: number }>,
  countEvents: (from: number, to: number) => Promise<Iterable<{ level: string | null; count: number }>>,
): Promise<Map<string | null, number>> {
  const firstWholeHour = Math.ceil(from / HOUR_MS) * HOUR_MS
  const endOfWholeHours = Math.floor(to / HOUR_MS) * HOUR_MS
  const parts: Iterable<{ level: string | null; count: number }>[] = []
  if (firstWholeHour >= endOfWholeHours) parts.push(await countEvents(from, to))
  else {
    parts.push(countHours(firstWholeHour, endOfWholeHours))
    if (from < firstWholeHour) parts.push(await countEvents(from, firstWholeHour))
    if (endOfWholeHours < to) parts.push(await countEvents(endOfWholeHours, to))
  }
  const counts = new Map<string | null, number>()
  for (const part of parts) for (const row of part) counts.set(row.level, (counts.get(row.level) ?? 0) + Number(row.count))
  return counts
}

/** The rows of the hourly level counts a batch adds, as the portal's logs module keeps them. */
export function levelHourRows(events: BenchEvent[]): { hour: number; levelKey: string; level: string | null; events: number }[] {
  const counts = new Map<string, { hour: number; levelKey: string; level: string | null; events: number }>()
  for (const event of events) {
    const level = event.data.level ?? null
    const hour = Math.floor(event.ts / HOUR_MS) * HOUR_MS
    const levelKey = JSON.stringify(level)
    const key = `${hour} ${levelKey}`
    const counted = counts.get(key)
    if (counted) counted.events += 1
    else counts.set(key, { hour, levelKey, level, events: 1 })
  }
  return [...counts.values()]
}
