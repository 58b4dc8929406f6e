import { Type, type Static } from 'typebox'
import { named } from '../http/openapi-components.ts'

const Time = (description: string) => Type.String({ format: 'date-time', description })

export const AlertStateSchema = Type.Union([Type.Literal('ok'), Type.Literal('pending'), Type.Literal('firing'), Type.Literal('resolved'), Type.Literal('error')], {
  description: 'ok → pending (the condition holds, for less than the pending period) → firing → resolved; error when the evaluation failed',
})
export const SeveritySchema = Type.Union([Type.Literal('warning'), Type.Literal('critical')])

export const Condition = named(
  'AlertCondition',
  Type.Object(
    {
      op: Type.Union([Type.Literal('above'), Type.Literal('below')], { description: 'the value is above (>) or below (<) a threshold' }),
      compareTo: Type.Optional(
        Type.Union([Type.Literal('value'), Type.Literal('day_before'), Type.Literal('week_before')], {
          default: 'value',
          description: '`value`: the window’s value itself; `day_before` / `week_before`: its change in % against the same window a day or a week earlier (no data when that window had 0)',
        }),
      ),
      critical: Type.Number({ description: 'the threshold that fires the alert with severity critical' }),
      warning: Type.Optional(Type.Number({ description: 'a threshold short of critical that fires it with severity warning' })),
      resolve: Type.Optional(Type.Number({ description: 'hysteresis: a firing alert resolves only once the value crosses this back (≤ it for `above`, ≥ it for `below`), not the lowest threshold' })),
    },
    { additionalProperties: false },
  ),
)

export const Targets = named(
  'AlertTargets',
  Type.Object(
    {
      endpointIds: Type.Array(Type.String({ description: 'whe_… of a webhook endpoint of the project (generic, Slack or Discord kind)' }), { maxItems: 20, default: [] }),
      repeatIntervalSeconds: Type.Optional(
        Type.Union([Type.Integer({ minimum: 60, maximum: 7 * 86_400 }), Type.Null()], { default: null, description: 'while firing, notify again this often; null: once per transition' }),
      ),
      sendResolved: Type.Optional(Type.Boolean({ default: true, description: 'also notify when the alert resolves' })),
    },
    { additionalProperties: false },
  ),
)

/** A rule as written (create, replace, import): what the API takes and the export gives. */
const RuleFields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'unique in the project: import matches rules by it' }),
  description: Type.Optional(Type.String({ maxLength: 2000, default: '' })),
  signal: Type.String({ description: 'a signal of `GET /api/alerts/signals` (`logs.count`, `traces.duration`, …)' }),
  filters: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 1000 }), { default: {}, description: 'the signal’s filters, by name; values as text' })),
  aggregate: Type.Optional(Type.String({ description: 'one of the signal’s aggregates; its first when absent' })),
  by: Type.Optional(Type.Union([Type.String(), Type.Null()], { default: null, description: 'one of the signal’s dimensions: one alert instance per series, at most 100 (past that, one `too many series` alert)' })),
  windowSeconds: Type.Integer({ minimum: 60, maximum: 86_400, description: 'the window evaluated, 1 minute to 24 hours' }),
  condition: Condition,
  intervalSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400, default: 60, description: 'how often the rule is evaluated' })),
  pendingSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, default: 0, description: 'fire only once the condition has held this long' })),
  noData: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('alerting'), Type.Literal('keep')], { default: 'ok', description: 'with no value (no spans, say): treat as ok, as breaching critical, or keep the state' })),
  targets: Type.Optional(Targets),
  enabled: Type.Optional(Type.Boolean({ default: true })),
}

export const RuleDefinition = named('AlertRuleDefinition', Type.Object(RuleFields, { additionalProperties: false, description: 'An alert rule as written; the export’s items and the import’s input.' }))
export type RuleDefinitionInput = Static<typeof RuleDefinition>

export const RuleInput = named('AlertRuleInput', Type.Object({ projectId: Type.String({ description: 'prj_…' }), ...RuleFields }, { additionalProperties: false }))

export const AlertRule = named(
  'AlertRule',
  Type.Object({
    id: Type.String({ description: 'alr_…' }),
    projectId: Type.String(),
    ...RuleFields,
    description: Type.String(),
    filters: Type.Record(Type.String(), Type.String()),
    aggregate: Type.String(),
    by: Type.Union([Type.String(), Type.Null()]),
    intervalSeconds: Type.Integer(),
    pendingSeconds: Type.Integer(),
    noData: Type.String(),
    targets: Type.Object({ endpointIds: Type.Array(Type.String()), repeatIntervalSeconds: Type.Union([Type.Integer(), Type.Null()]), sendResolved: Type.Boolean() }),
    enabled: Type.Boolean(),
    brokenTargets: Type.Array(Type.String(), { description: 'targets that no longer exist (deleted endpoints): nothing is sent to them' }),
    state: AlertStateSchema,
    firing: Type.Integer({ description: 'instances firing now' }),
    lastEvaluatedAt: Type.Union([Time('the end of the latest window evaluated and applied'), Type.Null()]),
    createdAt: Time('created'),
    updatedAt: Time('last changed'),
  }),
)

export const AlertInstance = named(
  'AlertInstance',
  Type.Object({
    series: Type.String({ description: 'the dimension’s value; empty without `by`' }),
    state: AlertStateSchema,
    severity: Type.Union([SeveritySchema, Type.Null()]),
    value: Type.Union([Type.Number(), Type.Null()]),
    since: Time('when the state began'),
    lastNotifiedAt: Type.Union([Time('the latest notification'), Type.Null()]),
  }),
)

export const AlertTransition = named(
  'AlertTransition',
  Type.Object({
    id: Type.String({ description: 'alh_…' }),
    ruleId: Type.String(),
    ruleName: Type.String(),
    series: Type.String(),
    from: AlertStateSchema,
    to: AlertStateSchema,
    severity: Type.Union([SeveritySchema, Type.Null()]),
    value: Type.Union([Type.Number(), Type.Null()], { description: 'the value evaluated (null: no data)' }),
    threshold: Type.Union([Type.Number(), Type.Null()], { description: 'the threshold it was compared with' }),
    windowFrom: Time('the window’s start'),
    windowTo: Time('the window’s end'),
    at: Time('when the transition was recorded'),
    silenceId: Type.Union([Type.String(), Type.Null()], { description: 'the silence that held the notification back' }),
    messageId: Type.Union([Type.String(), Type.Null()], { description: 'the webhook message that carried the notification (msg_…, the receivers’ webhook-id); null when none was sent' }),
    detail: Type.Union([Type.String(), Type.Null()], { description: 'the evaluation error, or why this was recorded (`repeat`, `too many series`)' }),
  }),
)

export const SilenceInput = named(
  'AlertSilenceInput',
  Type.Object(
    {
      projectId: Type.String(),
      ruleId: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'one rule (alr_…); null or absent: every rule of the project' })),
      series: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'one value of the rule’s dimension (a service, a group); null or absent: every series' })),
      startsAt: Type.Optional(Time('default now')),
      endsAt: Time('when the silence ends'),
      reason: Type.String({ minLength: 1, maxLength: 1000 }),
    },
    { additionalProperties: false },
  ),
)

export const AlertSilence = named(
  'AlertSilence',
  Type.Object({
    id: Type.String({ description: 'als_…' }),
    projectId: Type.String(),
    ruleId: Type.Union([Type.String(), Type.Null()]),
    series: Type.Union([Type.String(), Type.Null()]),
    startsAt: Time('start'),
    endsAt: Time('end'),
    reason: Type.String(),
    createdBy: Type.String({ description: 'the access token that made it (pat id)' }),
    createdAt: Time('created'),
    active: Type.Boolean({ description: 'now within [startsAt, endsAt)' }),
  }),
)

/** The `data` of `alert.firing`, `alert.resolved` and `alert.error` (the OpenAPI document’s `webhooks`). */
export const AlertNotification = named(
  'AlertNotification',
  Type.Object({
    ruleId: Type.String(),
    ruleName: Type.String(),
    projectId: Type.String(),
    signal: Type.String(),
    aggregate: Type.String(),
    series: Type.String({ description: 'the dimension’s value; empty without `by`' }),
    by: Type.Union([Type.String(), Type.Null()]),
    state: AlertStateSchema,
    previousState: AlertStateSchema,
    severity: Type.Union([SeveritySchema, Type.Null()]),
    value: Type.Union([Type.Number(), Type.Null()]),
    threshold: Type.Union([Type.Number(), Type.Null()]),
    op: Type.String({ description: 'above or below' }),
    compareTo: Type.String({ description: 'value, day_before or week_before (then `value` is a change in %)' }),
    unit: Type.String(),
    windowSeconds: Type.Integer(),
    windowFrom: Time('the window’s start'),
    windowTo: Time('the window’s end'),
    filters: Type.Record(Type.String(), Type.String()),
    headline: Type.String({ description: 'one line for people: what crossed what' }),
    link: Type.Union([Type.String(), Type.Null()], { description: 'the UI view of the window with the rule’s filters (PUBLIC_URL; null when it is unset)' }),
    topContributors: Type.Array(
      Type.Object({ label: Type.String(), value: Type.Optional(Type.Number()), detail: Type.Optional(Type.String()), at: Type.Optional(Type.String()) }),
      { description: 'what weighed most: top error groups, sample log lines, slowest spans, the endpoint’s last attempts' },
    ),
    repeat: Type.Boolean({ description: 'a reminder while firing (the repeat interval), not a new transition' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'alert.error: why the evaluation failed' }),
    transitionId: Type.String({ description: 'alh_… of the history row' }),
  }),
)
