import { queryString, useGet } from '../api.ts'
import { BarChart, Filters, LoadState, Table } from '../components.tsx'
import { useFilters } from '../router.tsx'
import { useChanges, WithChanges } from '../components/changes.tsx'
import type { components } from '../api-types.generated.ts'

type PeriodTotal = components['schemas']['CostPeriodTotal']
type CostTotals = components['schemas']['CostTotals']

const FILTERS = ['group_by', 'currency', 'from_period', 'to_period', 'service', 'provider', 'region']

function money(amount: number, currency: string) {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency, maximumFractionDigits: 2 }).format(amount)
}

/** Month totals of one currency, oldest month first (amounts in different currencies are never added). */
function monthBars(rows: PeriodTotal[], currency: string) {
  const months = new Map<string, number>()
  for (const row of rows) if (row.currency === currency) months.set(row.period, (months.get(row.period) ?? 0) + row.total)
  return [...months].sort(([a], [b]) => a.localeCompare(b)).map(([label, value]) => ({ label, value }))
}

/** The first moment of the month after `YYYY-MM`, ISO 8601. */
function nextMonth(period: string): string {
  const [year, month] = period.split('-').map(Number)
  return new Date(Date.UTC(year, month, 1)).toISOString()
}

export function CostsPage({ project }: { project: string }) {
  const filters = useFilters(FILTERS)
  const totals = useGet<CostTotals>(`/api/modules/costs/totals${queryString({ project_id: project, ...filters })}`)
  const answer = totals.data
  const months = answer?.data.map((row) => row.period).sort() ?? []
  // The months charted: their changes are listed beside the bars, and each bar says how many fell in its month.
  const window = months.length > 0 ? { from: `${months[0]}-01T00:00:00.000Z`, to: nextMonth(months[months.length - 1]), spanMs: 0, listTo: undefined, preset: undefined } : undefined
  const changes = useChanges(project, window ?? { from: '', to: '', spanMs: 0, listTo: undefined, preset: undefined }, { service: filters.service }, window !== undefined)
  const changesPerMonth = (month: string) => changes.list.filter((change) => change.ts.startsWith(month)).length
  return (
    <section>
      <h1>Costs</h1>
      <Filters
        fields={[
          {
            name: 'group_by',
            label: 'Group by',
            kind: 'select',
            options: [
              ['', 'service'],
              ['provider', 'provider'],
              ['region', 'region'],
              ['none', 'month only'],
            ],
          },
          { name: 'currency', label: 'Currency', placeholder: 'EUR' },
          { name: 'from_period', label: 'From month', placeholder: 'YYYY-MM' },
          { name: 'to_period', label: 'To month', placeholder: 'YYYY-MM' },
          { name: 'service', label: 'Service' },
        ]}
      />
      <LoadState loading={totals.loading && !answer} error={totals.error} empty={answer?.data.length === 0} emptyText="No cost events in this window." what="cost totals" />
      {answer && answer.data.length > 0 && (
        <>
          <WithChanges project={project} changes={changes}>
            <div class="charts">
              {answer.currencies.map((currency) => (
                <BarChart
                  title={`${currency.currency} per month — ${money(currency.total, currency.currency)} in all`}
                  bars={monthBars(answer.data, currency.currency)}
                  format={(value) => money(value, currency.currency)}
                  changesPer={changesPerMonth}
                />
              ))}
            </div>
          </WithChanges>
          <Table
            items={answer.data}
            rowKey={(row) => `${row.period}|${row.currency}|${row.group}`}
            columns={[
              { title: 'Month', render: (row) => row.period },
              { title: answer.groupBy === 'none' ? 'Group' : answer.groupBy[0].toUpperCase() + answer.groupBy.slice(1), render: (row) => row.group ?? '—' },
              { title: 'Total', numeric: true, render: (row) => money(row.total, row.currency) },
              { title: 'vs. previous month', numeric: true, render: (row) => (row.changePercent === null ? '—' : `${row.changePercent > 0 ? '+' : ''}${row.changePercent}%`) },
              { title: 'Events', numeric: true, render: (row) => row.events },
            ]}
          />
        </>
      )}
    </section>
  )
}
