import { Type } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PortalContext } from '../context.ts'
import { accessPrincipal } from '../http/auth.ts'
import { DEFAULT_LIMIT, List, PageQuery, pageAfter, toPage } from '../http/list.ts'
import { named } from '../http/openapi-components.ts'
import { ProblemError, problemResponses } from '../http/problem.ts'
import { isoTime, newId } from '../ids.ts'
import { recordManagementAction } from '../modules/audit/record.ts'
import { findProject } from '../projects/store.ts'
import { backtest, BACKTEST_RANGES, type BacktestRange } from './backtest.ts'
import { alertSignals } from './catalog.ts'
import { checkTargets, definitionOf, normalizeRule, ruleOf, ruleRow, ruleViews, type Rule, type RuleDefinition } from './rules.ts'
import { AlertInstance, AlertRule, AlertSilence, AlertTransition, RuleDefinition as RuleDefinitionSchema, RuleInput, SilenceInput } from './schemas.ts'
import { alertDb, type AlertTables } from './tables.ts'
import './changes.ts'

const tags = ['alerts']
const RuleParams = Type.Object({ id: Type.String({ description: 'alr_…' }) })
const ProjectQuery = { project_id: Type.String({ description: 'the project (prj_…)' }) }
const Range = Type.Union(Object.keys(BACKTEST_RANGES).map((range) => Type.Literal(range)), { default: '24h', description: 'the history replayed: the last 24 hours or 7 days' })

const AlertSignalSchema = named(
  'AlertSignal',
  Type.Object({
    name: Type.String(),
    module: Type.String({ description: 'the module that offers it' }),
    description: Type.String(),
    unit: Type.String(),
    aggregates: Type.Array(Type.String(), { description: 'the first is the default' }),
    filters: Type.Record(Type.String(), Type.String(), { description: 'filter name → what it matches; `name.*` takes any suffix' }),
    requiredFilters: Type.Array(Type.String()),
    dimensions: Type.Record(Type.String(), Type.String(), { description: 'what `by` may name' }),
    eventDriven: Type.Boolean({ description: 'its rules are evaluated right after an event that may change it commits, not only at their interval' }),
  }),
)

const BacktestSchema = named(
  'AlertBacktest',
  Type.Object({
    from: Type.String({ format: 'date-time', description: 'the first window’s end' }),
    to: Type.String({ format: 'date-time', description: 'the last window’s end: now (the windows before it end at whole minutes)' }),
    stepSeconds: Type.Integer({ description: 'the rule’s interval, or longer so that at most 288 windows are read, rounded up to whole minutes' }),
    thresholds: Type.Object({ critical: Type.Number(), warning: Type.Union([Type.Number(), Type.Null()]), resolve: Type.Union([Type.Number(), Type.Null()]) }),
    series: Type.Array(Type.Object({ series: Type.String(), points: Type.Array(Type.Object({ at: Type.String({ format: 'date-time' }), value: Type.Union([Type.Number(), Type.Null()]) })) }), { description: 'at most 10: those that fired, then the largest' }),
    firings: Type.Integer({ description: 'how many times it would have fired (notifications, repeats aside)' }),
    transitions: Type.Array(Type.Object({ at: Type.String({ format: 'date-time' }), series: Type.String(), from: Type.String(), to: Type.String(), value: Type.Union([Type.Number(), Type.Null()]) })),
  }),
)

const RulesExport = named(
  'AlertRulesExport',
  Type.Object(
    {
      version: Type.Literal(1, { description: 'the format’s version' }),
      rules: Type.Array(RuleDefinitionSchema, { maxItems: 1000 }),
    },
    { additionalProperties: false, description: 'A project’s rules as code: keep it in git, import it into any project. Targets name endpoints of the project imported into.' },
  ),
)

const ImportReport = named(
  'AlertRulesImportReport',
  Type.Object({
    created: Type.Array(Type.String(), { description: 'names of rules created' }),
    changed: Type.Array(Type.String(), { description: 'names of rules whose definition changed' }),
    unchanged: Type.Array(Type.String(), { description: 'names of rules left as they were; rules of the project the file does not name are left too' }),
  }),
)

function silenceView(row: AlertTables['alert_silences'], now = Date.now()) {
  return {
    id: row.id,
    projectId: row.project_id,
    ruleId: row.rule_id,
    series: row.series,
    startsAt: isoTime(Number(row.starts_at))!,
    endsAt: isoTime(Number(row.ends_at))!,
    reason: row.reason,
    createdBy: row.created_by,
    createdAt: isoTime(Number(row.created_at))!,
    active: Number(row.starts_at) <= now && now < Number(row.ends_at),
  }
}

function transitionView(row: AlertTables['alert_history']) {
  return {
    id: row.id,
    ruleId: row.rule_id,
    ruleName: row.rule_name,
    series: row.series,
    from: row.from_state,
    to: row.to_state,
    severity: row.severity,
    value: row.value === null ? null : Number(row.value),
    threshold: row.threshold === null ? null : Number(row.threshold),
    windowFrom: isoTime(Number(row.window_from))!,
    windowTo: isoTime(Number(row.window_to))!,
    at: isoTime(Number(row.at))!,
    silenceId: row.silence_id,
    messageId: row.message_id,
    detail: row.detail,
  }
}

function backtestView(rule: Pick<Rule, 'condition'>, result: Awaited<ReturnType<typeof backtest>>) {
  return {
    from: isoTime(result.from)!,
    to: isoTime(result.to)!,
    stepSeconds: result.stepSeconds,
    thresholds: { critical: rule.condition.critical, warning: rule.condition.warning ?? null, resolve: rule.condition.resolve ?? null },
    series: result.series.map((line) => ({ series: line.series, points: line.points.map((point) => ({ at: isoTime(point.at)!, value: point.value })) })),
    firings: result.firings,
    transitions: result.transitions.map((transition) => ({ ...transition, at: isoTime(transition.at)! })),
  }
}

/** Alert rules, their states and history, silences, preview and rules as code (docs/alerts.md). */
export const alertRoutes: FastifyPluginAsyncTypebox<{ ctx: PortalContext }> = async (app, { ctx }) => {
  const db = alertDb(ctx.storage)

  /** A rule of a live project of the caller's organisation, or a 404. */
  async function findRule(orgId: string, id: string): Promise<Rule> {
    const row = await db
      .selectFrom('alert_rules')
      .selectAll('alert_rules')
      .innerJoin('projects', 'projects.id', 'alert_rules.project_id')
      .where('alert_rules.id', '=', id)
      .where('projects.org_id', '=', orgId)
      .where('projects.deleted_at', 'is', null)
      .executeTakeFirst()
    if (!row) throw new ProblemError(404, 'not_found', `alert rule ${id} was not found`)
    return ruleOf(row, ctx.storage.parseJson)
  }

  async function view(rule: Rule) {
    return (await ruleViews(ctx.storage, [rule]))[0]
  }

  app.get(
    '/api/alerts/signals',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listAlertSignals',
        tags,
        summary: 'What alert rules can watch: every module’s signals, with their filters, aggregates and dimensions',
        description: 'Each module declares its own signals; this list is read from the module registry.',
        response: { 200: Type.Object({ data: Type.Array(AlertSignalSchema) }), ...problemResponses(401, 403, 503) },
      },
    },
    async () => ({
      data: alertSignals().map((signal) => ({
        name: signal.name,
        module: signal.name.split('.')[0],
        description: signal.description,
        unit: signal.unit,
        aggregates: signal.aggregates,
        filters: signal.filters,
        requiredFilters: signal.requiredFilters ?? [],
        dimensions: signal.dimensions,
        eventDriven: (signal.triggeredBy?.length ?? 0) > 0,
      })),
    }),
  )

  app.post(
    '/api/alerts/rules',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'createAlertRule',
        tags,
        summary: 'Create an alert rule',
        description: 'A rule naming an unknown signal, filter, aggregate, dimension or endpoint, or a threshold that is not a finite number, is a 400 naming the field, and nothing is stored. Audited (`alert.rule.created`).',
        body: RuleInput,
        response: { 201: AlertRule, ...problemResponses(400, 401, 403, 404, 'rule_name_taken', 415, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const { projectId, ...input } = request.body
      await findProject(ctx.storage.db, principal.orgId, projectId)
      const definition = normalizeRule(input, 'body')
      const now = Date.now()
      const row = ruleRow(newId('alr', now), projectId, definition, now)
      await db.transaction().execute(async (trx) => {
        await checkTargets(trx, projectId, definition, 'body')
        await refuseTakenName(trx, projectId, definition.name, null)
        await trx.insertInto('alert_rules').values(row).execute()
        await recordManagementAction(trx, ctx, projectId, principal, 'alert.rule.created', row.id, { name: definition.name, signal: definition.signal })
      })
      return reply.code(201).send(await view(ruleOf(row, ctx.storage.parseJson)))
    },
  )

  async function refuseTakenName(trx: typeof db, projectId: string, name: string, except: string | null) {
    let taken = trx.selectFrom('alert_rules').select('id').where('project_id', '=', projectId).where('name', '=', name)
    if (except !== null) taken = taken.where('id', '!=', except)
    if (await taken.executeTakeFirst()) throw new ProblemError(409, 'rule_name_taken', `body.name: the project has a rule named ${JSON.stringify(name)} already`)
  }

  app.get(
    '/api/alerts/rules',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listAlertRules',
        tags,
        summary: 'A project’s alert rules, newest first, with their state',
        description: '`brokenTargets` lists targeted endpoints deleted since.',
        querystring: Type.Object({ ...ProjectQuery, ...PageQuery }, { additionalProperties: false }),
        response: { 200: List(AlertRule), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { project_id: projectId, limit = DEFAULT_LIMIT, cursor } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const rows = await pageAfter(db.selectFrom('alert_rules').selectAll().where('project_id', '=', projectId), cursor, limit, 'created_at', 'id').execute()
      const page = toPage(rows, limit, (row) => [Number(row.created_at), row.id], (row) => ruleOf(row, ctx.storage.parseJson))
      return { data: await ruleViews(ctx.storage, page.data), nextCursor: page.nextCursor }
    },
  )

  app.get(
    '/api/alerts/rules/:id',
    {
      config: { access: 'read' },
      schema: { operationId: 'getAlertRule', tags, summary: 'Read an alert rule with its state', description: '404 for a rule of another organisation.', params: RuleParams, response: { 200: AlertRule, ...problemResponses(401, 403, 404, 503) } },
    },
    async (request) => view(await findRule(accessPrincipal(request).orgId, request.params.id)),
  )

  app.put(
    '/api/alerts/rules/:id',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'replaceAlertRule',
        tags,
        summary: 'Replace an alert rule’s definition',
        description: 'Checked like a new rule. Its instances keep their states; it is evaluated at once. Audited (`alert.rule.updated`).',
        params: RuleParams,
        body: RuleDefinitionSchema,
        response: { 200: AlertRule, ...problemResponses(400, 401, 403, 404, 'rule_name_taken', 415, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const rule = await findRule(principal.orgId, request.params.id)
      const definition = normalizeRule(request.body, 'body')
      const now = Math.max(Date.now(), rule.updatedAt + 1)
      const row = ruleRow(rule.id, rule.projectId, definition, now, rule.createdAt)
      await db.transaction().execute(async (trx) => {
        await checkTargets(trx, rule.projectId, definition, 'body')
        await refuseTakenName(trx, rule.projectId, definition.name, rule.id)
        await replaceRule(trx, row)
        await recordManagementAction(trx, ctx, rule.projectId, principal, 'alert.rule.updated', rule.id, { name: definition.name })
      })
      return view(await findRule(principal.orgId, rule.id))
    },
  )

  async function replaceRule(trx: typeof db, row: AlertTables['alert_rules']) {
    const { id, project_id: _project, created_at: _created, evaluated_through: _through, ...changed } = row
    await trx.updateTable('alert_rules').set(changed).where('id', '=', id).execute()
  }

  app.delete(
    '/api/alerts/rules/:id',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'deleteAlertRule',
        tags,
        summary: 'Delete an alert rule',
        description: 'Its instances go; its history stays until retention (RETENTION_DAYS_ALERTS). Audited (`alert.rule.deleted`).',
        params: RuleParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const rule = await findRule(principal.orgId, request.params.id)
      await db.transaction().execute(async (trx) => {
        await ctx.storage.lockInTransaction(trx, `alert_rule:${rule.id}`)
        await trx.deleteFrom('alert_instances').where('rule_id', '=', rule.id).execute()
        await trx.deleteFrom('alert_rules').where('id', '=', rule.id).execute()
        await recordManagementAction(trx, ctx, rule.projectId, principal, 'alert.rule.deleted', rule.id, { name: rule.name })
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/alerts/rules/:id/evaluate',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'evaluateAlertRule',
        tags,
        summary: 'Evaluate a rule now rather than at its next interval',
        description: 'The rule becomes due; the next portal to look (within a quarter second) claims and evaluates it, once, as at its interval.',
        params: RuleParams,
        response: { 202: Type.Object({ id: Type.String() }), ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const rule = await findRule(accessPrincipal(request).orgId, request.params.id)
      await db.updateTable('alert_rules').set({ next_evaluation_at: Date.now() }).where('id', '=', rule.id).execute()
      return reply.code(202).send({ id: rule.id })
    },
  )

  app.get(
    '/api/alerts/rules/:id/instances',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listAlertInstances',
        tags,
        summary: 'A rule’s alert instances (one per series) and their current states',
        description: 'Instances appear once a series first leaves ok.',
        params: RuleParams,
        response: { 200: Type.Object({ data: Type.Array(AlertInstance) }), ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const rule = await findRule(accessPrincipal(request).orgId, request.params.id)
      const rows = await db.selectFrom('alert_instances').selectAll().where('rule_id', '=', rule.id).orderBy('series').execute()
      return {
        data: rows.map((row) => ({
          series: row.series,
          state: row.state,
          severity: row.severity,
          value: row.value === null ? null : Number(row.value),
          since: isoTime(Number(row.since))!,
          lastNotifiedAt: isoTime(row.last_notified_at === null ? null : Number(row.last_notified_at)),
        })),
      }
    },
  )

  app.get(
    '/api/alerts/history',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listAlertHistory',
        tags,
        summary: 'Alert state transitions of a project, or of one rule, newest first',
        description: 'Every transition with its value, threshold and window, whether a silence held its notification back, and the message that carried it. Kept RETENTION_DAYS_ALERTS days.',
        querystring: Type.Object({ ...ProjectQuery, rule_id: Type.Optional(Type.String({ description: 'only this rule (alr_…)' })), ...PageQuery }, { additionalProperties: false }),
        response: { 200: List(AlertTransition), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { project_id: projectId, rule_id: ruleId, limit = DEFAULT_LIMIT, cursor } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      let query = db.selectFrom('alert_history').selectAll().where('project_id', '=', projectId)
      if (ruleId !== undefined) query = query.where('rule_id', '=', ruleId)
      const rows = await pageAfter(query, cursor, limit, 'at', 'id').execute()
      return toPage(rows, limit, (row) => [Number(row.at), row.id], transitionView)
    },
  )

  app.post(
    '/api/alerts/preview',
    {
      // part of writing a rule; a viewer backtests stored rules (GET …/backtest)
      config: { access: 'admin' },
      schema: {
        operationId: 'previewAlertRule',
        tags,
        summary: 'Backtest a rule being written: its series over the last 24 h or 7 d, its thresholds, and how often it would have fired',
        description: 'The rule is checked as on create and evaluated over stored history the way the evaluator reads it; nothing is stored.',
        body: Type.Object({ projectId: Type.String(), rule: RuleDefinitionSchema, range: Type.Optional(Range) }, { additionalProperties: false }),
        response: { 200: BacktestSchema, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request) => {
      const { projectId, rule: input, range = '24h' } = request.body
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const rule: Rule = { ...normalizeRule(input, 'body.rule'), id: 'preview', projectId, createdAt: 0, updatedAt: 0, evaluatedThrough: 0 }
      return backtestView(rule, await backtest(ctx, rule, range as BacktestRange))
    },
  )

  app.get(
    '/api/alerts/rules/:id/backtest',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'backtestAlertRule',
        tags,
        summary: 'A stored rule’s series over the last 24 h or 7 d, with its thresholds, and how often it would have fired',
        description: 'Compare `firings` with the rule’s history of the same range.',
        params: RuleParams,
        querystring: Type.Object({ range: Type.Optional(Range) }, { additionalProperties: false }),
        response: { 200: BacktestSchema, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const rule = await findRule(accessPrincipal(request).orgId, request.params.id)
      return backtestView(rule, await backtest(ctx, rule, (request.query.range ?? '24h') as BacktestRange))
    },
  )

  app.get(
    '/api/alerts/rules-export',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'exportAlertRules',
        tags,
        summary: 'A project’s rules as code (JSON), to keep in git and import',
        description: 'The same document `POST /api/alerts/rules-import` takes; ordered by name.',
        querystring: Type.Object(ProjectQuery, { additionalProperties: false }),
        response: { 200: RulesExport, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const projectId = request.query.project_id
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const rows = await db.selectFrom('alert_rules').selectAll().where('project_id', '=', projectId).orderBy('name').execute()
      return { version: 1 as const, rules: rows.map((row) => definitionOf(ruleOf(row, ctx.storage.parseJson))) }
    },
  )

  app.post(
    '/api/alerts/rules-import',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'importAlertRules',
        tags,
        summary: 'Create or update a project’s rules from an export, matched by name',
        description: 'Idempotent: importing the same document again changes nothing. Every rule is checked before any is written (a 400 names `body.rules.<index>.<field>`); rules the document does not name are left. Each creation and change is audited.',
        body: Type.Object({ projectId: Type.String(), ...RulesExport.properties }, { additionalProperties: false }),
        response: { 200: ImportReport, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const { projectId, rules } = request.body
      await findProject(ctx.storage.db, principal.orgId, projectId)
      const definitions = rules.map((input, index) => normalizeRule(input, `body.rules.${index}`))
      const seen = new Set<string>()
      for (const [index, definition] of definitions.entries()) {
        if (seen.has(definition.name)) throw new ProblemError(400, 'invalid_request', `body.rules.${index}.name: names a rule the document names before`)
        seen.add(definition.name)
      }
      const report = { created: [] as string[], changed: [] as string[], unchanged: [] as string[] }
      await db.transaction().execute(async (trx) => {
        for (const [index, definition] of definitions.entries()) await checkTargets(trx, projectId, definition, `body.rules.${index}`)
        const existing = new Map((await trx.selectFrom('alert_rules').selectAll().where('project_id', '=', projectId).execute()).map((row) => [row.name, ruleOf(row, ctx.storage.parseJson)]))
        const now = Date.now()
        for (const definition of definitions) {
          const before = existing.get(definition.name)
          if (!before) {
            const row = ruleRow(newId('alr', now), projectId, definition, now)
            await trx.insertInto('alert_rules').values(row).execute()
            await recordManagementAction(trx, ctx, projectId, principal, 'alert.rule.created', row.id, { name: definition.name, signal: definition.signal, imported: true })
            report.created.push(definition.name)
          } else if (sameDefinition(definitionOf(before), definition)) {
            report.unchanged.push(definition.name)
          } else {
            await replaceRule(trx, ruleRow(before.id, projectId, definition, Math.max(now, before.updatedAt + 1), before.createdAt))
            await recordManagementAction(trx, ctx, projectId, principal, 'alert.rule.updated', before.id, { name: definition.name, imported: true })
            report.changed.push(definition.name)
          }
        }
      })
      return report
    },
  )

  app.post(
    '/api/alerts/silences',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'createAlertSilence',
        tags,
        summary: 'Silence a rule, a series (a dimension’s value), or every rule of a project, for a time',
        description: 'A transition while silenced is recorded in the history with the silence’s id and not delivered. Audited (`alert.silence.created`).',
        body: SilenceInput,
        response: { 201: AlertSilence, ...problemResponses(400, 401, 403, 404, 415, 503) },
      },
    },
    async (request, reply) => {
      const principal = accessPrincipal(request)
      const { projectId, ruleId = null, series = null, reason } = request.body
      await findProject(ctx.storage.db, principal.orgId, projectId)
      const now = Date.now()
      const startsAt = request.body.startsAt === undefined ? now : Date.parse(request.body.startsAt)
      const endsAt = Date.parse(request.body.endsAt)
      if (endsAt <= startsAt) throw new ProblemError(400, 'invalid_request', 'body.endsAt: must be after startsAt')
      if (ruleId !== null) {
        const rule = await findRule(principal.orgId, ruleId).catch(() => undefined)
        if (!rule || rule.projectId !== projectId) throw new ProblemError(400, 'invalid_request', `body.ruleId: no alert rule ${ruleId} in project ${projectId}`)
      }
      const row = { id: newId('als', now), project_id: projectId, rule_id: ruleId, series, starts_at: startsAt, ends_at: endsAt, reason, created_by: principal.kind === 'accessToken' ? principal.tokenId : 'oidc', created_at: now }
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('alert_silences').values(row).execute()
        await recordManagementAction(trx, ctx, projectId, principal, 'alert.silence.created', row.id, { ruleId, series, reason, startsAt: isoTime(startsAt), endsAt: isoTime(endsAt) })
      })
      return reply.code(201).send(silenceView(row))
    },
  )

  app.get(
    '/api/alerts/silences',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listAlertSilences',
        tags,
        summary: 'A project’s silences, newest first, ended ones included',
        description: '`active` says whether it holds notifications back now.',
        querystring: Type.Object({ ...ProjectQuery, ...PageQuery }, { additionalProperties: false }),
        response: { 200: List(AlertSilence), ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { project_id: projectId, limit = DEFAULT_LIMIT, cursor } = request.query
      await findProject(ctx.storage.db, accessPrincipal(request).orgId, projectId)
      const rows = await pageAfter(db.selectFrom('alert_silences').selectAll().where('project_id', '=', projectId), cursor, limit, 'created_at', 'id').execute()
      return toPage(rows, limit, (row) => [Number(row.created_at), row.id], (row) => silenceView(row))
    },
  )

  app.delete(
    '/api/alerts/silences/:id',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'endAlertSilence',
        tags,
        summary: 'End a silence now',
        description: 'It stays listed, ended. Audited (`alert.silence.ended`).',
        params: Type.Object({ id: Type.String({ description: 'als_…' }) }),
        response: { 200: AlertSilence, ...problemResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const principal = accessPrincipal(request)
      const row = await db
        .selectFrom('alert_silences')
        .selectAll('alert_silences')
        .innerJoin('projects', 'projects.id', 'alert_silences.project_id')
        .where('alert_silences.id', '=', request.params.id)
        .where('projects.org_id', '=', principal.orgId)
        .where('projects.deleted_at', 'is', null)
        .executeTakeFirst()
      if (!row) throw new ProblemError(404, 'not_found', `silence ${request.params.id} was not found`)
      const now = Date.now()
      const ended = { ...row, ends_at: Math.min(Number(row.ends_at), now) }
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('alert_silences').set({ ends_at: ended.ends_at }).where('id', '=', row.id).execute()
        await recordManagementAction(trx, ctx, row.project_id, principal, 'alert.silence.ended', row.id)
      })
      return silenceView(ended, now)
    },
  )
}

function sameDefinition(a: RuleDefinition, b: RuleDefinition): boolean {
  return canonical(a) === canonical(b)
}

/** JSON with keys sorted, so that two definitions compare by content. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}
