import { sql } from 'kysely'
import type { PortalContext } from '../context.ts'
import { newId } from '../ids.ts'
import { enqueueMessage } from '../webhooks/enqueue.ts'
import { wakeDispatcher } from '../webhooks/dispatcher.ts'
import { tablesOf, type Connection } from '../storage/tables.ts'
import type { WebhookTables } from '../webhooks/tables.ts'
import { alertSignals } from './catalog.ts'
import { notificationData, type AlertEventType } from './notification.ts'
import { ruleOf, signalOf, type Rule } from './rules.ts'
import { createMinuteCounts, type MinuteCounts } from './minute-counts.ts'
import type { AlertSignal, Contributor, SeriesValue } from './signal.ts'
import { NEW_INSTANCE, nextStep, type InstanceState, type Step } from './state-machine.ts'
import { alertDb, type AlertTables } from './tables.ts'

/** Instances one rule keeps at most; past this, one `too many series` instance fires instead of a flood. */
const MAX_SERIES = 100
const TOO_MANY_SERIES = '(too many series)'
/** How often a portal looks for due rules and for events that trigger rules at once. */
const TICK_MS = 250
const RULES_PER_CLAIM = 32
/** One rule at a time: a tick has one query in flight, and its pacing decides the share of the time it has one. */
const CONCURRENT_EVALUATIONS = 1
/**
 * A tick spreads the rules due at its start so that its last claim ends about this long after it started (at most
 * half the shortest interval among them): the same work spread thinner leaves the cores to ingest, and a cycle of
 * 1,000 rules stays inside the 10 s it may take. With more work than that, it runs unpaced.
 */
const PACE_MS = 7_500
const DAY_MS = 86_400_000

/**
 * The rule's value per series over the window ending at `at`; a change in % when it compares with the day or week
 * before. Counts read the minutes kept in `counts` that were settled at `now` (the evaluation's time, or a backtest's).
 */
export async function seriesValues(ctx: PortalContext, rule: Rule, at: number, counts: MinuteCounts, now = at): Promise<SeriesValue[]> {
  const signal = signalOf(rule)
  const windowMs = rule.windowSeconds * 1000
  const kept = { counts, scope: { signal: rule.signal, now } }
  const ask = (end: number) => signal.evaluate(ctx, { projectId: rule.projectId, fromMs: end - windowMs, toMs: end, filters: rule.filters, aggregate: rule.aggregate, by: rule.by ?? undefined, kept })
  const current = await ask(at)
  if (rule.condition.compareTo === 'value') return current
  const before = new Map((await ask(at - comparedOffsetMs(rule))).map((row) => [row.series, row.value]))
  return current.flatMap((row) => {
    const base = before.get(row.series)
    return base === undefined || base === 0 ? [] : [{ series: row.series, value: (100 * (row.value - base)) / Math.abs(base) }]
  })
}

/** How far before its window a rule's compared window is: a day or a week, or 0 when it compares with a value. */
export function comparedOffsetMs(rule: Rule): number {
  return rule.condition.compareTo === 'value' ? 0 : rule.condition.compareTo === 'day_before' ? DAY_MS : 7 * DAY_MS
}

/**
 * The value each instance is judged by: the series found (the most extreme MAX_SERIES of them), and the instances
 * already stored that the answer lacks (0 for a count, else no data). `tooMany` counts the series when past the cap.
 */
export function valuesToJudge(rule: Rule, signal: AlertSignal, found: SeriesValue[], known: string[]): { values: Map<string, number | null>; tooMany: number | null } {
  const sorted = [...found].sort((a, b) => (rule.condition.op === 'above' ? b.value - a.value : a.value - b.value))
  const kept = sorted.slice(0, MAX_SERIES)
  const values = new Map<string, number | null>(kept.map((row) => [row.series, row.value]))
  for (const series of known) {
    if (series === TOO_MANY_SERIES || values.has(series)) continue
    values.set(series, signal.absentIsZero && rule.condition.compareTo === 'value' ? 0 : null)
  }
  if (rule.by === null && !values.has('')) values.set('', signal.absentIsZero && rule.condition.compareTo === 'value' ? 0 : null)
  return { values, tooMany: found.length > MAX_SERIES ? found.length : null }
}

interface Outcome {
  windowFrom: number
  windowTo: number
  /** by series: the value, or null for no data */
  values: Map<string, number | null>
  tooMany: number | null
  contributors: Map<string, Contributor[]>
  /** the evaluation failed: every value is unknown */
  error: string | null
}

/** A rule evaluated, with what applying it needs. */
interface Evaluated {
  rule: Rule
  signal: AlertSignal
  outcome: Outcome
}

/**
 * Evaluates one rule for the window ending at `at`. Never throws for the signal's failure: that is the `error` state;
 * throws while the storage is unavailable, when nothing can be recorded.
 */
async function evaluateRule(ctx: PortalContext, rule: Rule, at: number, known: InstanceRow[], counts: MinuteCounts): Promise<Evaluated> {
  const signal = signalOf(rule)
  const outcome: Outcome = { windowFrom: at - rule.windowSeconds * 1000, windowTo: at, values: new Map(), tooMany: null, contributors: new Map(), error: null }
  try {
    const judged = valuesToJudge(rule, signal, await seriesValues(ctx, rule, at, counts), known.map((row) => row.series))
    outcome.values = judged.values
    outcome.tooMany = judged.tooMany
    // Contributors of the instances likely to notify, read before the transaction so that it stays short.
    const states = new Map(known.map((row) => [row.series, instanceOf(row)]))
    if (signal.contributors) {
      for (const [series, value] of judged.values) {
        if (judged.tooMany !== null && !states.has(series)) continue
        const step = nextStep(rule, states.get(series) ?? NEW_INSTANCE, value, at)
        // Contributors help a reader; a failure to read them must not hold the notification back.
        if (step?.notify === 'firing' || step?.notify === 'repeat') outcome.contributors.set(series, await signal.contributors(ctx, signalQuery(rule, outcome), series).catch(() => []))
      }
    }
  } catch (error) {
    if (ctx.storage.isUnavailable(error)) throw error
    outcome.error = error instanceof Error ? error.message : String(error)
    ctx.log.warn({ err: error, ruleId: rule.id }, 'alert rule evaluation failed; recorded as its error state')
  }
  return { rule, signal, outcome }
}

function signalQuery(rule: Rule, outcome: Pick<Outcome, 'windowFrom' | 'windowTo'>) {
  return { projectId: rule.projectId, fromMs: outcome.windowFrom, toMs: outcome.windowTo, filters: rule.filters, aggregate: rule.aggregate, by: rule.by ?? undefined }
}

type InstanceRow = Pick<AlertTables['alert_instances'], 'series' | 'state' | 'severity' | 'since' | 'last_notified_at'>

/** The stored instances of each rule, read in one statement (from `db`, inside a transaction or not). */
async function instancesOf(db: Connection, ruleIds: string[]): Promise<Map<string, InstanceRow[]>> {
  const byRule = new Map<string, InstanceRow[]>(ruleIds.map((id) => [id, []]))
  if (ruleIds.length === 0) return byRule
  const rows = await alertDb(db).selectFrom('alert_instances').select(['rule_id', 'series', 'state', 'severity', 'since', 'last_notified_at']).where('rule_id', 'in', ruleIds).execute()
  for (const { rule_id, ...row } of rows) byRule.get(rule_id)?.push(row)
  return byRule
}

function instanceOf(row: InstanceRow): InstanceState {
  return { state: row.state, severity: row.severity, since: Number(row.since), lastNotifiedAt: row.last_notified_at === null ? null : Number(row.last_notified_at) }
}

/**
 * Applies the outcomes of one claim in one transaction, under the locks of all its rules taken at once in a fixed
 * order (two portals never lock two rules in opposite orders): a transaction per rule took the database's writer from
 * ingest a thousand times a cycle, once for each commit, and four statements per rule (lock, read, update, read its
 * instances) became four per claim. When that transaction fails, each outcome is applied in its own, so that one rule
 * holds back no other.
 */
async function applyOutcomes(ctx: PortalContext, evaluated: Evaluated[]): Promise<void> {
  if (evaluated.length === 0) return
  let enqueued = 0
  try {
    enqueued = await alertDb(ctx.storage)
      .transaction()
      .execute((trx) => applyInTransaction(ctx, trx, evaluated))
  } catch (error) {
    if (evaluated.length === 1 || ctx.storage.isUnavailable(error)) throw error
    for (const item of evaluated) {
      try {
        enqueued += await alertDb(ctx.storage)
          .transaction()
          .execute((trx) => applyInTransaction(ctx, trx, [item]))
      } catch (itemError) {
        ctx.log.warn({ err: itemError, ruleId: item.rule.id }, 'alert rule evaluation could not be recorded; the next interval retries')
      }
    }
  }
  if (enqueued > 0) wakeDispatcher(ctx)
}

/**
 * Applies outcomes inside `trx`, under their rules' locks: every transition with its history row and its notification
 * (a webhook message in the outbox), so that a crash anywhere leaves all or none of them. Against the states stored
 * now, not those read before: two portals that evaluated the same window apply it once, and an older window or an
 * evaluation of a rule edited since is dropped. Returns the messages enqueued.
 */
async function applyInTransaction(ctx: PortalContext, trx: Connection, evaluated: Evaluated[]): Promise<number> {
  await ctx.storage.lockInTransaction(
    trx,
    evaluated.map((item) => `alert_rule:${item.rule.id}`),
  )
  const db = alertDb(trx)
  const ids = evaluated.map((item) => item.rule.id)
  const current = new Map((await db.selectFrom('alert_rules').select(['id', 'evaluated_through', 'updated_at', 'enabled']).where('id', 'in', ids).execute()).map((row) => [row.id, row]))
  const applicable = evaluated.filter(({ rule, outcome }) => {
    const row = current.get(rule.id)
    return row !== undefined && Number(row.updated_at) === rule.updatedAt && row.enabled === 1 && Number(row.evaluated_through) < outcome.windowTo
  })
  if (applicable.length === 0) return 0
  for (const windowTo of new Set(applicable.map((item) => item.outcome.windowTo))) {
    const through = applicable.filter((item) => item.outcome.windowTo === windowTo).map((item) => item.rule.id)
    await db.updateTable('alert_rules').set({ evaluated_through: windowTo }).where('id', 'in', through).execute()
  }
  const instances = await instancesOf(trx, applicable.map((item) => item.rule.id))
  let messages = 0
  for (const item of applicable) messages += await applyOutcome(ctx, trx, item, instances.get(item.rule.id) ?? [])
  return messages
}

/** Applies one outcome against its rule's stored instances `rows`: its transitions. Returns the messages enqueued. */
async function applyOutcome(ctx: PortalContext, trx: Connection, { rule, signal, outcome }: Evaluated, rows: InstanceRow[]): Promise<number> {
  const stored = new Map(rows.map((row) => [row.series, instanceOf(row)]))
  const now = outcome.windowTo
  const steps: { series: string; value: number | null; from: InstanceState; step: Step }[] = []
  if (outcome.error !== null) {
    const from = stored.get('') ?? NEW_INSTANCE
    if (from.state !== 'error') steps.push({ series: '', value: null, from, step: { to: 'error', severity: null, threshold: null, notify: null, detail: outcome.error } })
  } else {
    const flood = outcome.tooMany !== null
    for (const [series, value] of outcome.values) {
      // Past the cap no series becomes an instance: the one `too many series` alert speaks for them all.
      if (flood && !stored.has(series)) continue
      const from = stored.get(series) ?? NEW_INSTANCE
      const step = nextStep(rule, from, value, now)
      if (step) steps.push({ series, value, from, step })
    }
    const tooMany = stored.get(TOO_MANY_SERIES) ?? NEW_INSTANCE
    if (flood && tooMany.state !== 'firing') {
      steps.push({ series: TOO_MANY_SERIES, value: outcome.tooMany, from: tooMany, step: { to: 'firing', severity: 'critical', threshold: MAX_SERIES, notify: 'firing', detail: `too many series: ${outcome.tooMany} over the cap of ${MAX_SERIES}` } })
    } else if (!flood && tooMany.state === 'firing') {
      steps.push({ series: TOO_MANY_SERIES, value: null, from: tooMany, step: { to: 'resolved', severity: null, threshold: MAX_SERIES, notify: rule.targets.sendResolved ? 'resolved' : null, detail: 'back within the series cap' } })
    }
  }
  let messages = 0
  for (const { series, value, from, step } of steps) messages += await recordStep(ctx, trx, rule, signal, outcome, series, value, from, step, now)
  return messages
}

/** Writes one transition: its history row, its instance, and its notification unless silenced. Returns the messages enqueued. */
async function recordStep(
  ctx: PortalContext,
  trx: Connection,
  rule: Rule,
  signal: AlertSignal,
  outcome: Outcome,
  series: string,
  value: number | null,
  from: InstanceState,
  step: Step,
  now: number,
): Promise<number> {
  const db = alertDb(trx)
  const transitionId = newId('alh', now)
  const eventType: AlertEventType | null = step.to === 'error' ? 'alert.error' : step.notify === 'resolved' ? 'alert.resolved' : step.notify === null ? null : 'alert.firing'
  let silenceId: string | null = null
  let messageId: string | null = null
  if (eventType !== null) {
    silenceId = await activeSilence(trx, rule, series, now)
    const endpointIds = silenceId === null ? await deliverableTargets(trx, rule) : []
    if (endpointIds.length > 0) {
      const data = notificationData({ config: ctx.config, rule, signal, series, from: from.state, step, value, windowFrom: outcome.windowFrom, windowTo: outcome.windowTo, contributors: outcome.contributors.get(series) ?? [], error: outcome.error, transitionId })
      messageId = (await enqueueMessage(trx, { projectId: rule.projectId, eventType, payload: data, endpointIds, attempts: ctx.config.webhooks.retrySchedule.length + 1 })).messageId
    }
  }
  await db
    .insertInto('alert_history')
    .values({
      id: transitionId,
      project_id: rule.projectId,
      rule_id: rule.id,
      rule_name: rule.name,
      series,
      from_state: from.state,
      to_state: step.to,
      severity: step.severity,
      value,
      threshold: step.threshold,
      window_from: outcome.windowFrom,
      window_to: outcome.windowTo,
      at: Date.now(),
      silence_id: silenceId,
      message_id: messageId,
      detail: step.detail,
    })
    .execute()
  const notified = eventType !== null && silenceId === null ? now : from.lastNotifiedAt
  const since = step.to === from.state ? from.since : now
  const instance = { state: step.to, severity: step.severity, value, since, last_notified_at: notified, updated_at: now }
  await db
    .insertInto('alert_instances')
    .values({ rule_id: rule.id, series, project_id: rule.projectId, ...instance })
    .onConflict((conflict) => conflict.columns(['rule_id', 'series']).doUpdateSet(instance))
    .execute()
  return messageId === null ? 0 : 1
}

/** The silence holding back a notification of `series` of the rule now, if any. */
async function activeSilence(trx: Connection, rule: Rule, series: string, now: number): Promise<string | null> {
  const silence = await alertDb(trx)
    .selectFrom('alert_silences')
    .select('id')
    .where('project_id', '=', rule.projectId)
    .where('starts_at', '<=', now)
    .where('ends_at', '>', now)
    .where((eb) => eb.or([eb('rule_id', 'is', null), eb('rule_id', '=', rule.id)]))
    .where((eb) => eb.or([eb('series', 'is', null), eb('series', '=', series)]))
    .orderBy('id')
    .executeTakeFirst()
  return silence?.id ?? null
}

/** The rule's targets that are live and enabled now; deleted ones are the rule's broken targets. */
async function deliverableTargets(trx: Connection, rule: Rule): Promise<string[]> {
  if (rule.targets.endpointIds.length === 0) return []
  const rows = await tablesOf<WebhookTables>(trx)
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('project_id', '=', rule.projectId)
    .where('id', 'in', rule.targets.endpointIds)
    .where('deleted_at', 'is', null)
    .where('enabled', '=', 1)
    .orderBy('id')
    .execute()
  return rows.map((row) => row.id)
}

/**
 * Claims up to RULES_PER_CLAIM due rules in one statement: an update of their next evaluation time that keeps only
 * those still due when it runs, so that of the portals sharing the database exactly one claims each rule (another's
 * claim has moved it past `now`; PostgreSQL re-checks the condition on the row a concurrent claim committed). One
 * statement, one commit: a claim per rule cost a commit each, 1.2 s of a 6.5 s cycle of 1,000 rules. A portal that
 * dies after its claim leaves the rule to the next interval, evaluated from the states stored.
 */
async function claimDueRules(ctx: PortalContext, now: number, signals?: string[]): Promise<Rule[]> {
  const claimed = await alertDb(ctx.storage)
    // Materialised, the claim's rules are chosen once: as a subquery under `in`, PostgreSQL (on statistics taken
    // before the rules were due) chose them again for each due rule, and a cycle of 1,000 rules spent some 2 s there.
    .with((cte) => cte('claim').materialized(), () => dueRules(ctx, now, signals).select('id').orderBy('next_evaluation_at').limit(RULES_PER_CLAIM))
    .updateTable('alert_rules')
    .set({ next_evaluation_at: sql<number>`${sql.lit(now)} + interval_seconds * 1000` })
    .where('id', 'in', (eb) => eb.selectFrom('claim').select('claim.id'))
    .where('enabled', '=', 1)
    .where('next_evaluation_at', '<=', now)
    .returningAll()
    .execute()
  return claimed.map((row) => ruleOf(row, ctx.storage.parseJson))
}

/** The enabled rules due at `now` (of `signals` only, when given), of live projects. */
function dueRules(ctx: PortalContext, now: number, signals?: string[]) {
  const db = alertDb(ctx.storage)
  let due = db
    .selectFrom('alert_rules')
    .where('enabled', '=', 1)
    .where('next_evaluation_at', '<=', now)
    // a deleted project's rules stay with its rows (DESIGN: Projects), and rest
    .where('project_id', 'in', db.selectFrom('projects').select('id').where('deleted_at', 'is', null))
  if (signals) due = due.where('signal', 'in', signals)
  return due
}

async function countDueRules(ctx: PortalContext, now: number): Promise<number> {
  const row = await dueRules(ctx, now)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Rules of the signals an event just committed triggers (a new error group) become due now; false when none did. */
async function dueOnTriggers(ctx: PortalContext): Promise<boolean> {
  const db = alertDb(ctx.storage)
  const triggers = await db.selectFrom('alert_triggers').select(['id', 'project_id', 'notification_type']).orderBy('id').limit(500).execute()
  if (triggers.length === 0) return false
  const now = Date.now()
  await db.transaction().execute(async (trx) => {
    for (const [projectId, types] of groupTriggers(triggers)) {
      const signals = alertSignals().filter((signal) => signal.triggeredBy?.some((type) => types.has(type))).map((signal) => signal.name)
      if (signals.length > 0) await trx.updateTable('alert_rules').set({ next_evaluation_at: now }).where('project_id', '=', projectId).where('signal', 'in', signals).where('next_evaluation_at', '>', now).execute()
    }
    await trx.deleteFrom('alert_triggers').where('id', 'in', triggers.map((trigger) => trigger.id)).execute()
  })
  return true
}

function groupTriggers(triggers: { project_id: string; notification_type: string }[]): Map<string, Set<string>> {
  const byProject = new Map<string, Set<string>>()
  for (const trigger of triggers) {
    const types = byProject.get(trigger.project_id) ?? new Set<string>()
    types.add(trigger.notification_type)
    byProject.set(trigger.project_id, types)
  }
  return byProject
}

/**
 * Every portal runs this. Each tick claims the rules due at its start and evaluates them for windows ending then, so
 * that rules counting the same events share the count of the minutes not yet settled (src/alerts/minute-counts.ts);
 * it paces its claims over PACE_MS (see there). Beside it, so that no paced tick holds them back, the rules that an
 * event makes due (a new error group) are claimed and evaluated within a tick of the event. Returns how to stop it.
 */
export function startAlerting(ctx: PortalContext): () => Promise<void> {
  let stopped = false
  const timers = new Set<NodeJS.Timeout>()
  const running = new Set<Promise<void>>()
  const counts = createMinuteCounts()
  const eventDriven = alertSignals()
    .filter((signal) => signal.triggeredBy !== undefined)
    .map((signal) => signal.name)

  async function evaluateClaim(claimed: Rule[], at: number) {
    const known = await instancesOf(ctx.storage.db, claimed.map((rule) => rule.id))
    const queue = [...claimed]
    const evaluated: Evaluated[] = []
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENT_EVALUATIONS, queue.length) }, async () => {
        for (let rule = queue.shift(); rule; rule = queue.shift()) {
          await evaluateRule(ctx, rule, at, known.get(rule.id) ?? [], counts).then(
            (item) => evaluated.push(item),
            (error) => ctx.log.warn({ err: error, ruleId: rule!.id }, 'alert rule evaluation could not be recorded; the next interval retries'),
          )
        }
      }),
    )
    await applyOutcomes(ctx, evaluated).catch((error) => ctx.log.warn({ err: error }, 'alert rule evaluations could not be recorded; the next interval retries'))
  }

  /**
   * The rules due now, claim by claim. After each full claim it counts the rules still due, and waits so that their
   * expected work ends near the pace's end: the time to spare (pace − elapsed − remaining work) in equal gaps before
   * the claims left.
   */
  async function tick() {
    const at = Date.now()
    let paceMs = PACE_MS
    let busyMs = 0
    let evaluatedRules = 0
    for (;;) {
      const started = Date.now()
      const claimed = await claimDueRules(ctx, at)
      if (claimed.length === 0 || stopped) return
      await evaluateClaim(claimed, at)
      const claimMs = Date.now() - started
      busyMs += claimMs
      evaluatedRules += claimed.length
      paceMs = Math.min(paceMs, ...claimed.map((rule) => (rule.intervalSeconds * 1000) / 2))
      if (claimed.length < RULES_PER_CLAIM) continue // likely the last: the next claim tells
      const remaining = await countDueRules(ctx, at)
      // the slower of the mean and the last claim, so that work growing through a cycle does not overrun the pace
      const perRuleMs = Math.max(busyMs / evaluatedRules, claimMs / claimed.length)
      const slackMs = paceMs - (Date.now() - at) - remaining * perRuleMs
      if (remaining > 0 && slackMs > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, slackMs / Math.ceil(remaining / RULES_PER_CLAIM)))
    }
  }

  /** The event-driven rules that triggers made due, for windows ending now: they see the event. */
  async function triggeredTick() {
    if (!(await dueOnTriggers(ctx))) return
    const at = Date.now()
    for (;;) {
      const claimed = await claimDueRules(ctx, at, eventDriven)
      if (claimed.length === 0 || stopped) return
      await evaluateClaim(claimed, at)
    }
  }

  function loop(run: () => Promise<void>, failure: string) {
    if (stopped) return
    const timer = setTimeout(() => {
      timers.delete(timer)
      const done = run()
        .catch((error) => ctx.log.warn({ err: error }, failure))
        .finally(() => {
          running.delete(done)
          loop(run, failure)
        })
      running.add(done)
    }, TICK_MS)
    timers.add(timer)
  }
  loop(tick, 'alert scheduler tick failed; the next one retries')
  loop(triggeredTick, 'alert trigger tick failed; the next one retries')
  return async () => {
    stopped = true
    for (const timer of timers) clearTimeout(timer)
    await Promise.all(running)
  }
}
