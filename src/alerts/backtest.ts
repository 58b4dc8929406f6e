import type { PortalContext } from '../context.ts'
import { comparedOffsetMs, seriesValues, valuesToJudge } from './evaluator.ts'
import { createMinuteCounts, MAX_KEPT_COUNTS, MINUTE_MS } from './minute-counts.ts'
import { signalOf, type Rule } from './rules.ts'
import { NEW_INSTANCE, nextStep, type InstanceState } from './state-machine.ts'

export const BACKTEST_RANGES = { '24h': 86_400_000, '7d': 7 * 86_400_000 } as const
export type BacktestRange = keyof typeof BACKTEST_RANGES
/** Evaluations a backtest makes at most: the step is the rule's interval, or longer to stay within this. */
const MAX_POINTS = 288
const CONCURRENT_READS = 4
/** Series charted at most (the ones that fired, then the largest). */
const MAX_CHARTED_SERIES = 10

export interface Backtest {
  from: number
  to: number
  stepSeconds: number
  series: { series: string; points: { at: number; value: number | null }[] }[]
  /** transitions to firing the rule would have made (the notifications it would have sent, repeats aside) */
  firings: number
  transitions: { at: number; series: string; from: string; to: string; value: number | null }[]
}

/**
 * The rule evaluated over stored history, as the evaluator would have: at every step of the range (its interval,
 * or range / 288 when longer, in whole minutes), each window read the way the evaluator reads it, and the state
 * machine run over the values from ok. Counts what it would have fired. The steps end at the last whole minute, so
 * that a window of whole minutes is a sum of minute counts: those of the whole range are read at once, into counts
 * of this backtest's own (bounded like the evaluator's). A last window ends now.
 */
export async function backtest(ctx: PortalContext, rule: Rule, range: BacktestRange, now = Date.now()): Promise<Backtest> {
  const signal = signalOf(rule)
  const span = BACKTEST_RANGES[range]
  const stepMs = Math.ceil(Math.max(rule.intervalSeconds * 1000, span / MAX_POINTS) / MINUTE_MS) * MINUTE_MS
  const end = Math.floor(now / MINUTE_MS) * MINUTE_MS
  const times: number[] = []
  for (let at = end - Math.floor(span / stepMs) * stepMs; at <= end; at += stepMs) times.push(at)
  // and one ending now, so that what was just sent is in the last window
  if (now > end) times.push(now)
  const counts = createMinuteCounts(MAX_KEPT_COUNTS, { fromMs: times[0] - rule.windowSeconds * 1000 - comparedOffsetMs(rule), toMs: end })
  const found = new Array<Awaited<ReturnType<typeof seriesValues>>>(times.length)
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENT_READS }, async () => {
      for (let index = next++; index < times.length; index = next++) found[index] = await seriesValues(ctx, rule, times[index], counts, now)
    }),
  )
  const states = new Map<string, InstanceState>()
  const points = new Map<string, { at: number; value: number | null }[]>()
  const result: Backtest = { from: times[0], to: now, stepSeconds: stepMs / 1000, series: [], firings: 0, transitions: [] }
  for (const [index, at] of times.entries()) {
    const { values } = valuesToJudge(rule, signal, found[index], [...states.keys()])
    for (const [series, value] of values) {
      const line = points.get(series) ?? times.slice(0, index).map((earlier) => ({ at: earlier, value: signal.absentIsZero ? 0 : null }))
      line.push({ at, value })
      points.set(series, line)
      const from = states.get(series) ?? NEW_INSTANCE
      const step = nextStep(rule, from, value, at)
      if (!step) continue
      if (step.notify === 'firing') result.firings++
      if (step.to !== from.state) result.transitions.push({ at, series, from: from.state, to: step.to, value })
      states.set(series, { state: step.to, severity: step.severity, since: step.to === from.state ? from.since : at, lastNotifiedAt: step.notify ? at : from.lastNotifiedAt })
    }
  }
  const fired = new Set(result.transitions.filter((t) => t.to === 'firing').map((t) => t.series))
  const peak = (line: { value: number | null }[]) => Math.max(...line.map((point) => point.value ?? -Infinity))
  result.series = [...points]
    .sort(([a, lineA], [b, lineB]) => Number(fired.has(b)) - Number(fired.has(a)) || peak(lineB) - peak(lineA))
    .slice(0, MAX_CHARTED_SERIES)
    .map(([series, line]) => ({ series, points: line }))
  return result
}
