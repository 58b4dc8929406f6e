import { sql } from 'kysely'
import type { AlertSignal, SeriesValue, SignalQuery } from '../../alerts/signal.ts'
import { column, columnIs, NO_VALUE_SERIES, windowEvents, type EventWindow } from '../../alerts/event-window.ts'
import type { PortalContext } from '../../context.ts'

const COST_WINDOW: EventWindow = {
  table: 'cost_events',
  filters: { currency: columnIs('currency'), service: columnIs('service'), provider: columnIs('provider'), region: columnIs('region') },
  dimensions: { service: column('service'), provider: column('provider'), region: column('region') },
}

/** The UTC month holding `at`: its first millisecond, the next month's, and its `YYYY-MM`. */
function monthOf(at: number) {
  const date = new Date(at)
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
  const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
  return { start, end, period: new Date(start).toISOString().slice(0, 7) }
}

/**
 * The spend of the period (the month the window ends in), by the events' `period`, in the rule's currency; or its
 * forecast to the month's end at the pace so far. The rule's window does not narrow it: a budget is per period.
 */
async function periodSpend(ctx: PortalContext, query: SignalQuery): Promise<SeriesValue[]> {
  const month = monthOf(query.toMs)
  const { rows, store } = windowEvents(ctx, { ...COST_WINDOW, where: (q) => q.where('period', '=', month.period) }, { ...query, fromMs: month.start - 31 * 86_400_000, toMs: month.end + 31 * 86_400_000 })
  const series = query.by === undefined ? sql.lit('') : COST_WINDOW.dimensions[query.by](store)
  const found = await rows.select((eb) => [eb.fn.coalesce(eb.cast(series, 'text'), sql.lit(NO_VALUE_SERIES)).as('series'), eb.fn.sum('amount').as('value')]).groupBy('series').execute()
  const elapsed = Math.min(1, Math.max(1 / (month.end - month.start), (query.toMs - month.start) / (month.end - month.start)))
  return (found as { series: unknown; value: unknown }[]).map((row) => ({ series: String(row.series), value: query.aggregate === 'forecast' ? Number(row.value) / elapsed : Number(row.value) }))
}

export const costSignals: AlertSignal[] = [
  {
    name: 'costs.spend',
    description: 'The period’s spend (the month the window ends in) in one currency — `sum` so far, or `forecast` to the month’s end at the pace so far — against a budget as the threshold',
    unit: 'the currency',
    aggregates: ['sum', 'forecast'],
    filters: { currency: 'the ISO 4217 currency (required: spend is never summed across currencies)', service: 'the service', provider: 'the provider', region: 'the region' },
    requiredFilters: ['currency'],
    dimensions: { service: 'the service', provider: 'the provider', region: 'the region' },
    absentIsZero: true,
    uiSection: 'costs',
    evaluate: periodSpend,
  },
]
