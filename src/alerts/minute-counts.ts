import type { SeriesValue, SignalQuery } from './signal.ts'

export const MINUTE_MS = 60_000
/**
 * A minute is settled once it ended this long before the evaluation: its count is read once and kept. An event that
 * arrives later than this after its timestamp, into a minute already kept, is not counted by this portal's later
 * evaluations of the windows holding it (docs/alerts.md, "Evaluation delay").
 */
export const SETTLE_MS = 120_000
/** Counts a portal keeps at most, across all queries: a minute and each of its series are one (75–150 bytes of heap each). */
export const MAX_KEPT_COUNTS = 200_000
/** A kept minute no evaluation has read for this long is dropped: no rule's window reaches it any more. */
const UNREAD_MS = 2 * 3_600_000

/** What the per-minute counts of one query identity need from storage. */
export interface StoredCounts {
  /** events per series in [fromMs, toMs) */
  range(fromMs: number, toMs: number): Promise<SeriesValue[]>
  /** events per minute (its first millisecond) and series in [fromMs, toMs), both whole minutes */
  perMinute(fromMs: number, toMs: number): Promise<{ minute: number; series: string; value: number }[]>
}

interface KeptMinute {
  counts: Map<string, number>
  readAt: number
}

interface KeptQuery {
  minutes: Map<number, KeptMinute>
  cells: number
  /** its first fill kept the read-ahead range, or tried to */
  readAhead: boolean
  /** fills of this query run one after another, so that concurrent evaluations read a minute once */
  filling: Promise<unknown>
}

/**
 * One portal's per-minute counts of settled minutes, per query identity (signal, table, project, filters, by): rules
 * that differ only by their window share them. An evaluation adds up the kept minutes of its window and counts from
 * storage only the partial minute at its start and the unsettled minutes at its end; those last are counted once per
 * evaluation time and identity, shared by the rules evaluated at that time. Bounded: past `maxCounts`, the queries
 * read least recently are dropped whole.
 */
export interface MinuteCounts {
  /** counts kept now, for the bound's test */
  readonly size: number
  count(scope: CountScope, table: string, query: SignalQuery, stored: StoredCounts): Promise<SeriesValue[]>
}

/** Who asks: the signal (part of the identity) and the evaluation's time, which decides what is settled. */
export interface CountScope {
  signal: string
  now: number
}

/**
 * `readAhead`: the range its asker reads window by window (a backtest's): a query's first fill keeps every settled
 * minute of it in one statement, rather than one statement for each window's new minutes.
 */
export function createMinuteCounts(maxCounts = MAX_KEPT_COUNTS, readAhead?: { fromMs: number; toMs: number }): MinuteCounts {
  // insertion order is recency: a query read is moved to the end
  const queries = new Map<string, KeptQuery>()
  let cells = 0
  // unsettled counts of the current evaluation time, shared by the rules evaluated at it
  let recentAt = Number.NaN
  let recent = new Map<string, Promise<SeriesValue[]>>()

  function keptQuery(key: string): KeptQuery {
    const found = queries.get(key)
    if (found) {
      queries.delete(key)
      queries.set(key, found)
      return found
    }
    const created: KeptQuery = { minutes: new Map(), cells: 0, readAhead: false, filling: Promise.resolve() }
    queries.set(key, created)
    return created
  }

  function drop(key: string) {
    const query = queries.get(key)
    if (!query) return
    cells -= query.cells
    queries.delete(key)
  }

  /** Keeps the minutes of [fromMs, toMs) the query lacks, one statement per run of missing minutes; false when they would not fit. */
  async function fill(key: string, kept: KeptQuery, fromMs: number, toMs: number, stored: StoredCounts, now: number): Promise<boolean> {
    for (let run = fromMs; run < toMs; ) {
      const found = kept.minutes.get(run)
      if (found) {
        found.readAt = now
        run += MINUTE_MS
        continue
      }
      let end = run + MINUTE_MS
      while (end < toMs && !kept.minutes.has(end)) end += MINUTE_MS
      const rows = await stored.perMinute(run, end)
      // dropped meanwhile for another query's room: this evaluation counts from storage
      if (queries.get(key) !== kept) return false
      const added = new Map<number, KeptMinute>()
      for (let minute = run; minute < end; minute += MINUTE_MS) added.set(minute, { counts: new Map(), readAt: now })
      for (const row of rows) added.get(row.minute)?.counts.set(row.series, row.value)
      const size = [...added.values()].reduce((sum, minute) => sum + 1 + minute.counts.size, 0)
      for (const [other] of queries) {
        if (cells + size <= maxCounts) break
        if (other !== key) drop(other)
      }
      if (cells + size > maxCounts) return false
      for (const [minute, counts] of added) kept.minutes.set(minute, counts)
      kept.cells += size
      cells += size
      run = end
    }
    prune(key, kept, now)
    return true
  }

  /** Drops the query's minutes no evaluation read for UNREAD_MS (those of this evaluation were just read). */
  function prune(key: string, kept: KeptQuery, now: number) {
    if (queries.get(key) !== kept) return
    for (const [minute, counts] of kept.minutes) {
      if (counts.readAt >= now - UNREAD_MS) continue
      kept.minutes.delete(minute)
      kept.cells -= 1 + counts.counts.size
      cells -= 1 + counts.counts.size
    }
  }

  return {
    get size() {
      return cells
    },
    async count(scope, table, query, stored) {
      const { fromMs, toMs } = query
      const settledBy = Math.floor((scope.now - SETTLE_MS) / MINUTE_MS) * MINUTE_MS
      const settledEnd = Math.min(Math.floor(toMs / MINUTE_MS) * MINUTE_MS, settledBy)
      const firstWhole = Math.ceil(fromMs / MINUTE_MS) * MINUTE_MS
      const key = JSON.stringify([scope.signal, table, query.projectId, Object.entries(query.filters).sort(([a], [b]) => (a < b ? -1 : 1)), query.by ?? null])
      if (firstWhole >= settledEnd) return stored.range(fromMs, toMs)
      const kept = keptQuery(key)
      const filling = kept.filling.then(async () => {
        if (readAhead && !kept.readAhead) {
          kept.readAhead = true
          const aheadFrom = Math.min(firstWhole, Math.ceil(readAhead.fromMs / MINUTE_MS) * MINUTE_MS)
          const aheadTo = Math.max(settledEnd, Math.min(Math.floor(readAhead.toMs / MINUTE_MS) * MINUTE_MS, settledBy))
          // too many series to keep them all: each window fills its own minutes
          if (await fill(key, kept, aheadFrom, aheadTo, stored, scope.now)) return true
        }
        return fill(key, kept, firstWhole, settledEnd, stored, scope.now)
      })
      kept.filling = filling.catch(() => false)
      if (!(await filling)) return stored.range(fromMs, toMs)
      const total = new Map<string, number>()
      const add = (series: string, value: number) => total.set(series, (total.get(series) ?? 0) + value)
      // every minute of the window is there: fill kept them and marked them read now, so no prune drops them
      for (let minute = firstWhole; minute < settledEnd; minute += MINUTE_MS) for (const [series, value] of kept.minutes.get(minute)!.counts) add(series, value)
      if (recentAt !== scope.now) {
        recentAt = scope.now
        recent = new Map()
      }
      const recentKey = JSON.stringify([key, settledEnd, toMs])
      const unsettled = recent.get(recentKey) ?? (settledEnd < toMs ? stored.range(settledEnd, toMs) : Promise.resolve([]))
      recent.set(recentKey, unsettled)
      const [head, tail] = await Promise.all([firstWhole > fromMs ? stored.range(fromMs, firstWhole) : [], unsettled])
      for (const row of [...head, ...tail]) add(row.series, row.value)
      if (query.by === undefined) return [{ series: '', value: total.get('') ?? 0 }]
      return [...total].map(([series, value]) => ({ series, value }))
    },
  }
}
