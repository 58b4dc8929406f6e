import { ProblemError } from '../http/problem.ts'
import { isoTime } from '../ids.ts'
import type { Storage } from '../storage/storage.ts'
import { tablesOf, type Connection } from '../storage/tables.ts'
import { webhookDb, type WebhookTables } from '../webhooks/tables.ts'
import { alertSignals, findSignal } from './catalog.ts'
import { declaredFilter, type AlertSignal } from './signal.ts'
import type { RuleDefinitionInput } from './schemas.ts'
import { alertDb, type AlertState, type AlertTables } from './tables.ts'

/** A rule with every default filled in: what is stored in `definition` (beside name and signal) and evaluated. */
export interface Rule {
  id: string
  projectId: string
  name: string
  description: string
  signal: string
  filters: Record<string, string>
  aggregate: string
  by: string | null
  windowSeconds: number
  condition: { op: 'above' | 'below'; compareTo: 'value' | 'day_before' | 'week_before'; critical: number; warning?: number; resolve?: number }
  intervalSeconds: number
  pendingSeconds: number
  noData: 'ok' | 'alerting' | 'keep'
  targets: { endpointIds: string[]; repeatIntervalSeconds: number | null; sendResolved: boolean }
  enabled: boolean
  createdAt: number
  updatedAt: number
  /** the end of the latest window applied; 0 before the first */
  evaluatedThrough: number
}

export type RuleDefinition = Omit<Rule, 'id' | 'projectId' | 'createdAt' | 'updatedAt' | 'evaluatedThrough'>

const bad = (field: string, problem: string) => new ProblemError(400, 'invalid_request', `${field}: ${problem}`)

/**
 * The rule with its defaults, checked against its signal: an unknown signal, filter, aggregate or dimension, a
 * inconsistent thresholds are a 400 (a threshold that is not a finite number never passes the schema) naming the field (under `at`).
 */
export function normalizeRule(input: RuleDefinitionInput, at: string): RuleDefinition {
  const signal = findSignal(input.signal)
  if (!signal) throw bad(`${at}.signal`, `is not a known signal; the signals are ${alertSignals().map((s) => s.name).join(', ')}`)
  const filters = input.filters ?? {}
  for (const name of Object.keys(filters)) {
    if (!declaredFilter(signal, name)) throw bad(`${at}.filters.${name}`, `is not a filter of ${signal.name}; its filters are ${Object.keys(signal.filters).join(', ') || 'none'}`)
  }
  for (const name of signal.requiredFilters ?? []) if (filters[name] === undefined) throw bad(`${at}.filters.${name}`, `required by ${signal.name}`)
  const aggregate = input.aggregate ?? signal.aggregates[0]
  if (!signal.aggregates.includes(aggregate)) throw bad(`${at}.aggregate`, `is not an aggregate of ${signal.name}; one of ${signal.aggregates.join(', ')}`)
  const by = input.by ?? null
  if (by !== null && signal.dimensions[by] === undefined) throw bad(`${at}.by`, `is not a dimension of ${signal.name}; its dimensions are ${Object.keys(signal.dimensions).join(', ') || 'none'}`)
  const { op, compareTo = 'value', critical, warning, resolve } = input.condition
  const beyond = (a: number, b: number) => (op === 'above' ? a > b : a < b)
  if (warning !== undefined && beyond(warning, critical)) throw bad(`${at}.condition.warning`, `must not be beyond critical (${op} fires at critical first)`)
  const lowest = warning ?? critical
  if (resolve !== undefined && beyond(resolve, lowest)) throw bad(`${at}.condition.resolve`, `must be on the ok side of the ${warning === undefined ? 'critical' : 'warning'} threshold`)
  const targets = input.targets ?? { endpointIds: [] }
  const endpointIds = targets.endpointIds ?? []
  if (new Set(endpointIds).size !== endpointIds.length) throw bad(`${at}.targets.endpointIds`, 'names an endpoint twice')
  return {
    name: input.name,
    description: input.description ?? '',
    signal: signal.name,
    filters,
    aggregate,
    by,
    windowSeconds: input.windowSeconds,
    condition: { op, compareTo, critical, ...(warning === undefined ? {} : { warning }), ...(resolve === undefined ? {} : { resolve }) },
    intervalSeconds: input.intervalSeconds ?? 60,
    pendingSeconds: input.pendingSeconds ?? 0,
    noData: input.noData ?? 'ok',
    targets: { endpointIds, repeatIntervalSeconds: targets.repeatIntervalSeconds ?? null, sendResolved: targets.sendResolved ?? true },
    enabled: input.enabled ?? true,
  }
}

/** Targets must be live endpoints of the rule's project when the rule is written; later deletions show as broken targets. */
export async function checkTargets(db: Connection, projectId: string, definition: RuleDefinition, at: string): Promise<void> {
  const ids = definition.targets.endpointIds
  if (ids.length === 0) return
  const live = new Set(await liveEndpointIds(db, projectId, ids))
  const missing = ids.findIndex((id) => !live.has(id))
  if (missing >= 0) throw bad(`${at}.targets.endpointIds.${missing}`, `no endpoint ${ids[missing]} in project ${projectId}`)
}

async function liveEndpointIds(db: Connection, projectId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await tablesOf<WebhookTables>(db)
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('project_id', '=', projectId)
    .where('id', 'in', ids)
    .where('deleted_at', 'is', null)
    .execute()
  return rows.map((row) => row.id)
}

type RuleRow = AlertTables['alert_rules']

export function ruleOf(row: RuleRow, parseJson: Storage['parseJson']): Rule {
  const definition = parseJson<RuleDefinition>(row.definition)
  return {
    ...definition,
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    signal: row.signal,
    enabled: row.enabled === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    evaluatedThrough: Number(row.evaluated_through),
  }
}

export function ruleRow(id: string, projectId: string, definition: RuleDefinition, now: number, createdAt = now): RuleRow {
  const { name, signal, enabled, ...rest } = definition
  return {
    id,
    project_id: projectId,
    name,
    signal,
    definition: JSON.stringify({ ...rest, enabled }),
    enabled: enabled ? 1 : 0,
    interval_seconds: definition.intervalSeconds,
    next_evaluation_at: now,
    evaluated_through: 0,
    created_at: createdAt,
    updated_at: now,
  }
}

/** The definition as written (export, comparison on import): no ids, no times. */
export function definitionOf(rule: Rule | RuleDefinition): RuleDefinition {
  const { name, description, signal, filters, aggregate, by, windowSeconds, condition, intervalSeconds, pendingSeconds, noData, targets, enabled } = rule
  return { name, description, signal, filters, aggregate, by, windowSeconds, condition, intervalSeconds, pendingSeconds, noData, targets, enabled }
}

const STATE_WEIGHT: Record<AlertState, number> = { ok: 0, resolved: 1, pending: 2, error: 3, firing: 4 }

/** Rules as the API shows them: with the targets that no longer exist, the worst state and the firing count. */
export async function ruleViews(storage: Storage, rules: Rule[]) {
  if (rules.length === 0) return []
  const db = alertDb(storage)
  const ids = rules.map((rule) => rule.id)
  const instances = await db.selectFrom('alert_instances').select(['rule_id', 'state']).where('rule_id', 'in', ids).execute()
  const targeted = [...new Set(rules.flatMap((rule) => rule.targets.endpointIds))]
  const live = new Set(
    targeted.length === 0 ? [] : (await webhookDb(storage).selectFrom('webhook_endpoints').select('id').where('id', 'in', targeted).where('deleted_at', 'is', null).execute()).map((row) => row.id),
  )
  return rules.map(({ evaluatedThrough, ...rule }) => {
    const own = instances.filter((instance) => instance.rule_id === rule.id)
    const state = own.reduce<AlertState>((worst, instance) => (STATE_WEIGHT[instance.state] > STATE_WEIGHT[worst] ? instance.state : worst), 'ok')
    return {
      ...rule,
      brokenTargets: rule.targets.endpointIds.filter((id) => !live.has(id)),
      state,
      firing: own.filter((instance) => instance.state === 'firing').length,
      createdAt: isoTime(rule.createdAt)!,
      updatedAt: isoTime(rule.updatedAt)!,
      lastEvaluatedAt: evaluatedThrough === 0 ? null : isoTime(evaluatedThrough),
    }
  })
}

export function signalOf(rule: Pick<Rule, 'signal'>): AlertSignal {
  const signal = findSignal(rule.signal)
  if (!signal) throw new Error(`rule signal ${rule.signal} is no longer offered by any module`)
  return signal
}
