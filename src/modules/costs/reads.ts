import { Type } from 'typebox'
import { named } from '../../http/openapi-components.ts'
import { badQuery, Nullable, ProjectQuery, eventsDb, moduleReads, readRoute, requireReadableProject } from '../read-route.ts'
import type { CostTables } from './tables.ts'

const MONTH = '^[0-9]{4}-(0[1-9]|1[0-2])$'
const Grouping = Type.Union([Type.Literal('service'), Type.Literal('provider'), Type.Literal('region'), Type.Literal('none')], {
  description: 'what a row totals besides month and currency',
})

const PeriodTotal = named('CostPeriodTotal', Type.Object({
  period: Type.String({ description: 'YYYY-MM: the event’s `period`, else the UTC month of its time' }),
  currency: Type.String(),
  group: Nullable(Type.String({ description: 'the service, provider or region (per `group_by`); null for events without one, and for group_by=none' })),
  total: Type.Number({ description: 'sum of `amount`, rounded to 6 decimal places' }),
  events: Type.Integer(),
  previousTotal: Nullable(Type.Number({ description: 'the same group and currency in the month before; null when it had no costs' })),
  change: Nullable(Type.Number({ description: 'total − previousTotal' })),
  changePercent: Nullable(Type.Number({ description: 'change as a percentage of previousTotal, 2 decimal places; null when previousTotal is null or 0' })),
}))

const CostTotals = named('CostTotals', Type.Object({
  groupBy: Grouping,
  data: Type.Array(PeriodTotal, { description: 'newest period first, then currency, then largest total' }),
  currencies: Type.Array(Type.Object({ currency: Type.String(), total: Type.Number(), events: Type.Integer() }), {
    description: 'the whole window’s total per currency; amounts in different currencies are never added together',
  }),
}))

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places

/** The month before a YYYY-MM month. */
function monthBefore(period: string): string {
  const [year, month] = period.split('-').map(Number)
  return month === 1 ? `${year - 1}-12` : `${year}-${String(month - 1).padStart(2, '0')}`
}

export const costReads = moduleReads((app, ctx) => {
  app.get(
    '/totals',
    readRoute({
      tag: 'costs',
      operationId: 'getCostTotals',
      summary: 'Cost totals by month and by service, provider or region, one total per currency, with month-over-month change',
      description:
        'Amounts are summed only within one currency: each row is one (period, currency, group); `group_by` defaults to service. ' +
        'The month before `from_period` is read too, so that the first month shown has its change.',
      query: {
        ...ProjectQuery,
        group_by: Type.Optional(Grouping),
        from_period: Type.Optional(Type.String({ pattern: MONTH, description: 'first month, YYYY-MM' })),
        to_period: Type.Optional(Type.String({ pattern: MONTH, description: 'last month, YYYY-MM (inclusive)' })),
        currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', description: 'only costs in this ISO 4217 currency', examples: ['USD'] })),
        service: Type.Optional(Type.String({ description: 'only costs of this service' })),
        provider: Type.Optional(Type.String({ description: 'only costs of this provider' })),
        region: Type.Optional(Type.String({ description: 'only costs of this region' })),
      },
      response: CostTotals,
    }),
    async (request) => {
      const { project_id: projectId, group_by: groupBy = 'service' as const, from_period: fromPeriod, to_period: toPeriod, ...filters } = request.query
      if (fromPeriod !== undefined && toPeriod !== undefined && fromPeriod > toPeriod) throw badQuery('from_period', 'must not be after to_period')
      await requireReadableProject(ctx, request, projectId)
      const groupColumn = groupBy === 'none' ? undefined : groupBy
      let query = eventsDb<CostTables>(ctx, 'cost_events')
        .selectFrom('cost_events')
        .select((eb) => ['period', 'currency', eb.fn.sum('amount').as('total'), eb.fn.countAll().as('events')])
        .where('project_id', '=', projectId)
        .groupBy(['period', 'currency'])
        .$if(groupColumn !== undefined, (grouped) => grouped.select(`${groupColumn!} as group`).groupBy(groupColumn!))
      if (fromPeriod !== undefined) query = query.where('period', '>=', monthBefore(fromPeriod))
      if (toPeriod !== undefined) query = query.where('period', '<=', toPeriod)
      for (const column of ['currency', 'service', 'provider', 'region'] as const) {
        if (filters[column] !== undefined) query = query.where(column, '=', filters[column])
      }
      const rows = (await query.execute()).map((row) => ({
        period: String(row.period),
        currency: String(row.currency),
        group: (row.group ?? null) as string | null,
        total: Number(row.total),
        events: Number(row.events),
      }))

      const totalOf = new Map(rows.map((row) => [JSON.stringify([row.period, row.currency, row.group]), row.total]))
      const shown = rows.filter((row) => fromPeriod === undefined || row.period >= fromPeriod)
      const data = shown
        .map((row) => {
          const previous = totalOf.get(JSON.stringify([monthBefore(row.period), row.currency, row.group]))
          const change = previous === undefined ? null : round(row.total - previous, 6)
          return {
            ...row,
            total: round(row.total, 6),
            previousTotal: previous === undefined ? null : round(previous, 6),
            change,
            changePercent: previous === undefined || previous === 0 ? null : round(((row.total - previous) / previous) * 100, 2),
          }
        })
        .sort((a, b) => b.period.localeCompare(a.period) || a.currency.localeCompare(b.currency) || b.total - a.total || String(a.group).localeCompare(String(b.group)))

      const byCurrency = new Map<string, { currency: string; total: number; events: number }>()
      for (const row of shown) {
        const sum = byCurrency.get(row.currency) ?? { currency: row.currency, total: 0, events: 0 }
        sum.total += row.total
        sum.events += row.events
        byCurrency.set(row.currency, sum)
      }
      const currencies = [...byCurrency.values()].map((sum) => ({ ...sum, total: round(sum.total, 6) })).sort((a, b) => a.currency.localeCompare(b.currency))
      return { groupBy, data, currencies }
    },
  )
})
