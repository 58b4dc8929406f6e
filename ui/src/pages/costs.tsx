import { queryString, useGet } from '../api.ts'
import { BarChart, Filters, LoadState, Table } from '../components.tsx'
import { useFilters } from '../router.tsx'
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

export function CostsPage({ project }: { project: string }) {
  const filters = useFilters(FILTERS)
  const totals = useGet<CostTotals>(`/api/modules/costs/totals${queryString({ project_id: project, ...filters })}`)
  const answer = totals.data
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
          <div class="charts">
            {answer.currencies.map((currency) => (
              <BarChart
                title={`${currency.currency} per month — ${money(currency.total, currency.currency)} in all`}
                bars={monthBars(answer.data, currency.currency)}
                format={(value) => money(value, currency.currency)}
              />
            ))}
          </div>
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
