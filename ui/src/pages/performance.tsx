import { queryString, useGet } from '../api.ts'
import { Filters, LineChart, LoadState, Table } from '../components.tsx'
import { absoluteTime, TimeRangeControl, useTimeRange, useZone } from '../components/time.tsx'
import { useChanges, WithChanges } from '../components/changes.tsx'
import { Link, navigate, useFilters, withParams } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

type Summary = components['schemas']['PerformanceSummary']
type Series = components['schemas']['PerformanceSeries']

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `5m`, `1h`, `1d` (the series' `bucket`) in milliseconds. */
function bucketMs(bucket: string): number {
  const found = /^(\d+)([mhd])$/.exec(bucket)
  return found ? Number(found[1]) * UNIT_MS[found[2]] : 3_600_000
}

export function PerformancePage({ project }: { project: string }) {
  const { metric: chosen, service: chosenService } = useFilters(['metric', 'service'])
  const range = useTimeRange('24h')
  const zone = useZone()
  const scope = { service: chosenService, from: range.from, to: range.to }
  const summary = useGet<Summary>(`/api/modules/performance/summary${queryString({ project_id: project, ...scope })}`)
  const rows = summary.data?.data
  // Until a metric is chosen, the chart shows the first one the summary lists.
  const metric = chosen ?? rows?.[0]?.metric
  const service = scope.service ?? (chosen ? undefined : (rows?.[0]?.service ?? undefined))
  const series = useGet<Series>(metric ? `/api/modules/performance/series${queryString({ project_id: project, ...scope, service, metric })}` : null)
  const changes = useChanges(project, range, { service }, summary.data !== undefined)
  const width = series.data ? bucketMs(series.data.bucket) : 0
  // A point opens the traces of the chart's service in its bucket, slowest first: the requests behind a jump.
  const tracesAt = (startMs: number) => `/p/${project}/traces${queryString({ service, from: new Date(startMs).toISOString(), to: new Date(startMs + width).toISOString(), sort: 'duration' })}`
  const unit = rows?.find((row) => row.metric === metric)?.unit ?? undefined
  return (
    <section>
      <h1>Performance</h1>
      <Filters
        fields={[
          { name: 'service', label: 'Service' },
        ]}
      />
      <TimeRangeControl range={range} />
      {metric && (
        <>
          <h2>
            {metric} over time {service && `(${service})`}
          </h2>
          <LoadState loading={series.loading && !series.data} error={series.error} empty={series.data?.data.length === 0} emptyText="No values of this metric in the window (the series defaults to the last day)." what="the series" />
          {series.data && series.data.data.length > 0 && (
            <WithChanges project={project} changes={changes}>
              <LineChart
                title={`p50, p95 and p99 per ${series.data.bucket}`}
                unit={unit}
                fromMs={Date.parse(range.from)}
                toMs={Date.parse(range.to)}
                markers={changes.markers}
                series={(['p50', 'p95', 'p99'] as const).map((name) => ({ name, points: series.data!.data.map((bucket) => ({ x: Date.parse(bucket.start), y: bucket[name] })) }))}
                onSelect={{
                  label: (startMs) => {
                    const bucket = series.data!.data.find((point) => Date.parse(point.start) === startMs)
                    return `Traces${service ? ` of ${service}` : ''} from ${absoluteTime(startMs, zone)}: p95 ${bucket?.p95 ?? '—'}${unit ? ` ${unit}` : ''}`
                  },
                  select: (startMs) => navigate(tracesAt(startMs)),
                }}
              />
            </WithChanges>
          )}
        </>
      )}
      <h2>Percentiles per service and metric</h2>
      <LoadState loading={summary.loading && !rows} error={summary.error} empty={rows?.length === 0} emptyText="No performance values in this window." what="percentiles" />
      {rows && rows.length > 0 && (
        <Table
          items={rows}
          rowKey={(row) => `${row.service}|${row.metric}|${row.unit}`}
          columns={[
            { title: 'Service', render: (row) => row.service ?? '—' },
            { title: 'Metric', render: (row) => <Link href={withParams({ metric: row.metric, service: row.service ?? undefined })}>{row.metric}</Link> },
            { title: 'Unit', render: (row) => row.unit ?? '—' },
            { title: 'Count', numeric: true, render: (row) => row.count.toLocaleString() },
            { title: 'p50', numeric: true, render: (row) => row.p50 },
            { title: 'p95', numeric: true, render: (row) => row.p95 },
            { title: 'p99', numeric: true, render: (row) => row.p99 },
            { title: 'Avg', numeric: true, render: (row) => row.avg },
            { title: 'Max', numeric: true, render: (row) => row.max },
          ]}
        />
      )}
    </section>
  )
}
