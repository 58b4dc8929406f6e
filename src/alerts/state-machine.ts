import type { Rule } from './rules.ts'
import type { AlertState, Severity } from './tables.ts'

/** An instance's state as stored. */
export interface InstanceState {
  state: AlertState
  severity: Severity | null
  since: number
  lastNotifiedAt: number | null
}

/** What an evaluation does to one instance: its next state, the threshold it was judged by, and what to send. */
export interface Step {
  to: AlertState
  severity: Severity | null
  threshold: number | null
  /** the notification this step sends (`repeat` is a reminder while firing) */
  notify: 'firing' | 'resolved' | 'repeat' | null
  detail: string | null
}

export const NEW_INSTANCE: InstanceState = { state: 'ok', severity: null, since: 0, lastNotifiedAt: null }

const beyond = (rule: Pick<Rule, 'condition'>, value: number, threshold: number) => (rule.condition.op === 'above' ? value > threshold : value < threshold)

/** The severity whose threshold `value` crosses, or null. */
export function breachOf(rule: Pick<Rule, 'condition'>, value: number): Severity | null {
  if (beyond(rule, value, rule.condition.critical)) return 'critical'
  if (rule.condition.warning !== undefined && beyond(rule, value, rule.condition.warning)) return 'warning'
  return null
}

export function thresholdOf(rule: Pick<Rule, 'condition'>, severity: Severity | null): number {
  if (severity === 'critical') return rule.condition.critical
  if (severity === 'warning') return rule.condition.warning!
  return rule.condition.resolve ?? rule.condition.warning ?? rule.condition.critical
}

/**
 * The step one evaluation makes for an instance: `value` null is no data. Pending holds for `pendingSeconds`
 * before firing; a firing instance resolves only once the value crosses the resolve threshold back (hysteresis);
 * a change of severity while firing is a new firing notification; the repeat interval reminds. Null: nothing changes.
 */
export function nextStep(rule: Pick<Rule, 'condition' | 'pendingSeconds' | 'noData' | 'targets'>, current: InstanceState, value: number | null, now: number): Step | null {
  if (value === null && rule.noData === 'keep') return null
  const active = current.state === 'firing' || current.state === 'pending'
  let severity: Severity | null = value === null ? (rule.noData === 'alerting' ? 'critical' : null) : breachOf(rule, value)
  // Hysteresis: short of the resolve threshold, an active instance stays as it is.
  if (severity === null && active && value !== null && rule.condition.resolve !== undefined && beyond(rule, value, rule.condition.resolve)) severity = current.severity ?? 'warning'
  const detail = value === null ? 'no data' : null
  if (severity !== null) {
    if (current.state === 'firing') {
      if (severity !== current.severity) return { to: 'firing', severity, threshold: thresholdOf(rule, severity), notify: 'firing', detail }
      const repeat = rule.targets.repeatIntervalSeconds
      if (repeat !== null && current.lastNotifiedAt !== null && now - current.lastNotifiedAt >= repeat * 1000) return { to: 'firing', severity, threshold: thresholdOf(rule, severity), notify: 'repeat', detail: 'repeat' }
      return null
    }
    if (current.state === 'pending') {
      if (now - current.since < rule.pendingSeconds * 1000) return severity === current.severity ? null : { to: 'pending', severity, threshold: thresholdOf(rule, severity), notify: null, detail }
      return { to: 'firing', severity, threshold: thresholdOf(rule, severity), notify: 'firing', detail }
    }
    if (rule.pendingSeconds > 0) return { to: 'pending', severity, threshold: thresholdOf(rule, severity), notify: null, detail }
    return { to: 'firing', severity, threshold: thresholdOf(rule, severity), notify: 'firing', detail }
  }
  if (current.state === 'firing') return { to: 'resolved', severity: null, threshold: thresholdOf(rule, null), notify: rule.targets.sendResolved ? 'resolved' : null, detail }
  if (current.state === 'pending' || current.state === 'error') return { to: 'ok', severity: null, threshold: thresholdOf(rule, null), notify: null, detail }
  return null
}
