import type { Config } from '../config.ts'
import type { Rule } from './rules.ts'
import type { AlertSignal, Contributor } from './signal.ts'
import type { Step } from './state-machine.ts'
import type { AlertState } from './tables.ts'

export type AlertEventType = 'alert.firing' | 'alert.resolved' | 'alert.error'

/** The UI view of the window with the rule's filters: its module's page of the project (PUBLIC_URL; none without it). */
function windowLink(config: Pick<Config, 'publicUrl'>, rule: Rule, signal: AlertSignal, series: string, windowFrom: number, windowTo: number): string | null {
  if (config.publicUrl === undefined) return null
  const query = new URLSearchParams({ from: new Date(windowFrom).toISOString(), to: new Date(windowTo).toISOString(), ...rule.filters })
  if (rule.by !== null && series !== '') query.set(rule.by, series)
  return `${config.publicUrl}/p/${encodeURIComponent(rule.projectId)}/${signal.uiSection}?${query}`
}

const formatted = (value: number | null) => (value === null ? 'no data' : String(Math.round(value * 1000) / 1000))

/** The one line a person reads first: `[FIRING critical] 5xx rate (service=api): 12.5 % above 5 over 5 min`. */
function headlineOf(rule: Rule, signal: AlertSignal, step: Pick<Step, 'to' | 'severity' | 'threshold' | 'notify'>, series: string, value: number | null, error: string | null): string {
  const where = series === '' ? '' : ` (${rule.by}=${series})`
  if (error !== null) return `[ERROR] ${rule.name}${where}: the evaluation failed: ${error}`
  const unit = rule.condition.compareTo === 'value' ? ` ${signal.unit}` : ` % change vs the ${rule.condition.compareTo === 'day_before' ? 'day' : 'week'} before`
  const window = rule.windowSeconds % 3600 === 0 ? `${rule.windowSeconds / 3600} h` : `${Math.round(rule.windowSeconds / 60)} min`
  const state = step.to === 'firing' ? `FIRING ${step.severity}${step.notify === 'repeat' ? ', still' : ''}` : step.to.toUpperCase()
  const relation = step.to === 'firing' ? rule.condition.op : rule.condition.op === 'above' ? 'back to or below' : 'back to or above'
  return `[${state}] ${rule.name}${where}: ${formatted(value)}${unit} ${relation} ${formatted(step.threshold)} over ${window}`
}

/** The notification's `data` (AlertNotification in the OpenAPI document). */
export function notificationData(input: {
  config: Pick<Config, 'publicUrl'>
  rule: Rule
  signal: AlertSignal
  series: string
  from: AlertState
  step: Step
  value: number | null
  windowFrom: number
  windowTo: number
  contributors: Contributor[]
  error: string | null
  transitionId: string
}): Record<string, unknown> {
  const { rule, signal, series, step } = input
  return {
    ruleId: rule.id,
    ruleName: rule.name,
    projectId: rule.projectId,
    signal: rule.signal,
    aggregate: rule.aggregate,
    series,
    by: rule.by,
    state: step.to,
    previousState: input.from,
    severity: step.severity,
    value: input.value,
    threshold: step.threshold,
    op: rule.condition.op,
    compareTo: rule.condition.compareTo,
    unit: signal.unit,
    windowSeconds: rule.windowSeconds,
    windowFrom: new Date(input.windowFrom).toISOString(),
    windowTo: new Date(input.windowTo).toISOString(),
    filters: rule.filters,
    headline: headlineOf(rule, signal, step, series, input.value, input.error),
    link: windowLink(input.config, rule, signal, series, input.windowFrom, input.windowTo),
    topContributors: input.contributors,
    repeat: step.notify === 'repeat',
    error: input.error,
    transitionId: input.transitionId,
  }
}
