import type { PortalContext } from '../context.ts'
import type { NotificationType } from '../notifications.ts'
import type { CountScope, MinuteCounts } from './minute-counts.ts'

/** What an evaluation asks a signal: one project, one window, the rule's filters, aggregate and dimension. */
export interface SignalQuery {
  projectId: string
  /** the window: [fromMs, toMs) */
  fromMs: number
  toMs: number
  /** the rule's filters, by the names the signal declares */
  filters: Record<string, string>
  /** one of the signal's `aggregates` */
  aggregate: string
  /** one of the signal's `dimensions`, or undefined for one series */
  by: string | undefined
  /**
   * Set by the evaluator and by backtests (each its own): kept per-minute counts, which a count over the window reads
   * for its settled minutes (`countWindowEvents` does).
   */
  kept?: { counts: MinuteCounts; scope: CountScope }
}

/** One series' value over the window; `series` is the dimension's value, '' when the rule has no `by`. */
export interface SeriesValue {
  series: string
  value: number
}

/** What a notification lists so that a person knows where to look first (top error groups, sample lines, …). */
export interface Contributor {
  label: string
  value?: number
  detail?: string
  at?: string
}

/**
 * A quantity a module offers to alert rules, declared in the module's own folder (its `signals.ts`) and listed
 * by its module definition: the evaluator, the rule validation and the catalog read iterate the registry.
 */
export interface AlertSignal {
  /** unique across modules, prefixed by the module's name: `logs.count`, `traces.duration` */
  name: string
  /** for people: what the value is, in one line */
  description: string
  /** the unit of the value (`events`, `ms`, `%`, `seconds`, or a currency) */
  unit: string
  /** the aggregates it computes over the window; the first is the default */
  aggregates: string[]
  /** the rule filters it takes, by name, with what each matches; a name ending in `.*` takes any suffix (`field.*`) */
  filters: Record<string, string>
  /** filters every rule of the signal must give (a cost's currency: sums never mix currencies) */
  requiredFilters?: string[]
  /** the dimensions a rule may split it by ("by"), with what each is */
  dimensions: Record<string, string>
  /** a series absent from the answer has the value 0 (a count), rather than no data (a latency) */
  absentIsZero: boolean
  /** the portal's own notifications that make its rules evaluate at once, not at their next interval */
  triggeredBy?: NotificationType[]
  /** the UI section showing the signal's events (`logs`, `errors`), for the notification's link */
  uiSection: string
  /** the value of each series over the window; an empty answer is "no data" */
  evaluate(ctx: PortalContext, query: SignalQuery): Promise<SeriesValue[]>
  /** what contributed most to one series' value, for the notification */
  contributors?(ctx: PortalContext, query: SignalQuery, series: string): Promise<Contributor[]>
}

/** The filter declared for `name`: itself, or a `prefix.*` pattern that covers it. */
export function declaredFilter(signal: AlertSignal, name: string): string | undefined {
  if (signal.filters[name] !== undefined) return name
  return Object.keys(signal.filters).find((pattern) => pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1)) && name.length > pattern.length - 1)
}
