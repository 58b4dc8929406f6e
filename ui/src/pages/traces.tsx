import { queryString, useGet, usePaged } from '../api.ts'
import type { TargetedSubmitEvent } from 'preact'
import { Badge, Filters, LoadState, PagedTable, ScatterChart, Time } from '../components.tsx'
import { useChanges, WithChanges } from '../components/changes.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { Link, navigate, useFilters } from '../router.tsx'
import { errorsBySpan, spanlessTraceLogsHref, TraceSignals, useTraceErrors } from '../components/trace-links.tsx'
import { traceLogsHref } from '../components/log-links.tsx'
import type { components } from '../api-types.generated.ts'
import { formatMs, Waterfall } from './trace-waterfall.tsx'

type Trace = components['schemas']['Trace']
type TraceDetail = components['schemas']['TraceDetail']

export function TracesPage({ project }: { project: string }) {
  const filters = useFilters(['service', 'min_duration_ms', 'error', 'attribute', 'sort'])
  const range = useTimeRange('24h')
  const list = usePaged<Trace>(`/api/traces${queryString({ project_id: project, ...filters, from: range.from, to: range.listTo })}`)
  const changes = useChanges(project, range, { service: filters.service }, list.answered)
  return (
    <section>
      <h1>Traces</h1>
      <TraceLookup project={project} />
      <Filters
        fields={[
          { name: 'service', label: 'Service' },
          { name: 'attribute', label: 'Attribute (span or resource)', placeholder: 'http.route=/api/quote' },
          { name: 'min_duration_ms', label: 'Slower than (ms)', placeholder: '500' },
          {
            name: 'error',
            label: 'Errors',
            kind: 'select',
            options: [
              ['', 'any'],
              ['true', 'with an error span'],
              ['false', 'without errors'],
            ],
          },
          {
            name: 'sort',
            label: 'Order',
            kind: 'select',
            options: [
              ['', 'newest first'],
              ['duration', 'slowest first'],
            ],
          },
        ]}
      />
      <TimeRangeControl range={range} />
      <WithChanges project={project} changes={changes}>
        <ScatterChart
          title={`Duration of the ${list.items.length} traces listed, by start`}
          fromMs={Date.parse(range.from)}
          toMs={Date.parse(range.to)}
          unit="ms"
          markers={changes.markers}
          dots={list.items.map((trace) => ({ x: Date.parse(trace.startedAt), y: trace.durationMs, label: `${traceTitle(trace)}: ${formatMs(trace.durationMs)}`, href: `/p/${project}/traces/${encodeURIComponent(trace.traceId)}` }))}
        />
      </WithChanges>
      <PagedTable
        list={list}
        what="traces"
        emptyText="No trace matches: a trace is listed once its root span (a span without parentSpanId) has arrived."
        rowKey={(trace) => trace.traceId}
        stackOnPhone
        columns={[
          {
            title: 'Trace',
            render: (trace) => (
              <Link href={`/p/${project}/traces/${encodeURIComponent(trace.traceId)}`}>{traceTitle(trace)}</Link>
            ),
          },
          { title: 'Status', render: (trace) => (trace.statusCode === null ? <span class="muted">—</span> : <Badge value={String(trace.statusCode)} tone={trace.statusCode >= 500 ? 'failed' : trace.statusCode >= 400 ? 'warn' : 'succeeded'} />) },
          { title: 'Services', render: (trace) => trace.services.join(', ') },
          { title: 'Spans', numeric: true, render: (trace) => trace.spanCount },
          { title: 'Duration', numeric: true, render: (trace) => formatMs(trace.durationMs) },
          { title: 'Started', render: (trace) => <Time iso={trace.startedAt} /> },
        ]}
      />
    </section>
  )
}

/** `GET /api/quote`: the root span's name, with its route when the name does not already say it (OpenTelemetry HTTP servers name spans by method alone). */
function traceTitle(trace: Trace): string {
  const name = trace.rootSpan?.name ?? trace.traceId
  return trace.route && !name.includes(trace.route) ? `${name} ${trace.route}` : name
}

export function TracePage({ project, traceId }: { project: string; traceId: string }) {
  const trace = useGet<TraceDetail>(`/api/traces/${encodeURIComponent(traceId)}${queryString({ project_id: project })}`)
  const errors = useTraceErrors(project, traceId)
  const { span } = useFilters(['span'])
  const detail = trace.data
  // A trace id can come without spans: Sentry makes one up for an error captured outside any span, and a service may log a trace it did not export.
  const spanless = trace.error?.status === 404
  return (
    <section>
      <p>
        <Link href={`/p/${project}/traces`}>← All traces</Link>
      </p>
      <LoadState loading={trace.loading && !detail} error={spanless ? undefined : trace.error} what="the trace" />
      {spanless && (
        <>
          <h1>
            Trace <code>{traceId}</code>
          </h1>
          <p class="state" role="status">
            No spans were stored for this trace; only its errors and logs carry its id.
          </p>
          <TraceSignals project={project} traceId={traceId} logsHref={spanlessTraceLogsHref(project, traceId, errors.items)} errors={errors} />
        </>
      )}
      {detail && (
        <>
          <h1>{detail.rootSpan?.name ?? 'Trace'}</h1>
          <p class="facts">
            <code>{detail.traceId}</code> · {detail.spanCount} spans · {formatMs(detail.durationMs)} · {detail.services.join(', ')} · started <Time iso={detail.startedAt} />
          </p>
          <TraceSignals project={project} traceId={detail.traceId} logsHref={traceLogsHref(project, detail.traceId, detail.startedAt, detail.durationMs)} errors={errors} />
          {detail.truncated && <p class="state">This trace has more spans than the portal returns; the first {detail.spans.length} are shown.</p>}
          {span && !detail.spans.some((shown) => shown.spanId === span) && (
            <p class="state" role="status">
              Span <code>{span}</code> is not {detail.truncated ? 'among the spans shown' : 'in this trace'}.
            </p>
          )}
          <Waterfall project={project} trace={detail} currentSpanId={span} errorsBySpan={errorsBySpan(errors.items)} />
        </>
      )}
    </section>
  )
}


/** Straight to a trace by its id, as copied from a log line, a response header or another tool. */
function TraceLookup({ project }: { project: string }) {
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const traceId = String(new FormData(event.currentTarget).get('traceId') ?? '').trim()
    if (traceId) navigate(`/p/${project}/traces/${encodeURIComponent(traceId)}`)
  }
  return (
    <form class="inline" role="search" aria-label="Open a trace by id" onSubmit={onSubmit}>
      <label>
        <span>Trace id</span>
        <input name="traceId" type="search" required placeholder="4bf92f3577b34da6a3ce929d0e0e4736" spellcheck={false} />
      </label>
      <button type="submit">Open trace</button>
    </form>
  )
}
