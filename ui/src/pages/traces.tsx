import { queryString, useGet, usePaged } from '../api.ts'
import { Filters, Json, LoadState, PagedTable, Time, TIME_RANGE } from '../components.tsx'
import { Link, useFilters } from '../router.tsx'

interface SpanSummary {
  spanId: string
  name: string | null
  serviceName: string | null
  durationMs: number | null
}

interface Trace {
  traceId: string
  rootSpan: SpanSummary | null
  spanCount: number
  services: string[]
  startedAt: string
  durationMs: number
}

interface Span {
  eventId: string
  spanId: string
  parentSpanId: string | null
  serviceName: string | null
  name: string | null
  startedAt: string
  durationMs: number | null
  data: Record<string, unknown>
}

interface TraceDetail extends Trace {
  spans: Span[]
  truncated: boolean
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms * 10) / 10} ms`
}

export function TracesPage({ project }: { project: string }) {
  const filters = useFilters(['service', 'from', 'to'])
  const list = usePaged<Trace>(`/api/traces${queryString({ project_id: project, ...filters })}`)
  return (
    <section>
      <h1>Traces</h1>
      <Filters
        fields={[
          { name: 'service', label: 'Service' },
          ...TIME_RANGE,
        ]}
      />
      <PagedTable
        list={list}
        what="traces"
        emptyText="No trace matches: a trace is listed once its root span (a span without parentSpanId) has arrived."
        rowKey={(trace) => trace.traceId}
        columns={[
          {
            title: 'Trace',
            render: (trace) => (
              <Link href={`/p/${project}/traces/${encodeURIComponent(trace.traceId)}`}>{trace.rootSpan?.name ?? trace.traceId}</Link>
            ),
          },
          { title: 'Services', render: (trace) => trace.services.join(', ') },
          { title: 'Spans', numeric: true, render: (trace) => trace.spanCount },
          { title: 'Duration', numeric: true, render: (trace) => formatMs(trace.durationMs) },
          { title: 'Started', render: (trace) => <Time iso={trace.startedAt} /> },
        ]}
      />
    </section>
  )
}

/** Spans in tree order (each after its parent), with their depth; spans whose parent is missing start new roots. */
function treeOrder(spans: Span[]): { span: Span; depth: number }[] {
  const ids = new Set(spans.map((span) => span.spanId))
  const children = new Map<string | null, Span[]>()
  for (const span of spans) {
    const parent = span.parentSpanId !== null && ids.has(span.parentSpanId) ? span.parentSpanId : null
    children.set(parent, [...(children.get(parent) ?? []), span])
  }
  const ordered: { span: Span; depth: number }[] = []
  const visit = (parent: string | null, depth: number) => {
    for (const span of children.get(parent) ?? []) {
      ordered.push({ span, depth })
      if (depth < 64) visit(span.spanId, depth + 1)
    }
  }
  visit(null, 0)
  return ordered
}

export function TracePage({ project, traceId }: { project: string; traceId: string }) {
  const trace = useGet<TraceDetail>(`/api/traces/${encodeURIComponent(traceId)}${queryString({ project_id: project })}`)
  const detail = trace.data
  return (
    <section>
      <p>
        <Link href={`/p/${project}/traces`}>← All traces</Link>
      </p>
      <LoadState loading={trace.loading && !detail} error={trace.error} what="the trace" />
      {detail && (
        <>
          <h1>{detail.rootSpan?.name ?? 'Trace'}</h1>
          <p class="facts">
            <code>{detail.traceId}</code> · {detail.spanCount} spans · {formatMs(detail.durationMs)} · {detail.services.join(', ')} · started <Time iso={detail.startedAt} />
          </p>
          {detail.truncated && <p class="state">This trace has more spans than the portal returns; the first {detail.spans.length} are shown.</p>}
          <Waterfall trace={detail} />
        </>
      )}
    </section>
  )
}

function Waterfall({ trace }: { trace: TraceDetail }) {
  const start = Date.parse(trace.startedAt)
  const total = trace.durationMs || 1
  return (
    <ol class="waterfall" aria-label="Spans in start order, children under their parent">
      {treeOrder(trace.spans).map(({ span, depth }) => {
        const offset = ((Date.parse(span.startedAt) - start) / total) * 100
        const width = Math.max(((span.durationMs ?? 0) / total) * 100, 0.3)
        return (
          <li>
            <details>
              <summary>
                <span class="span-name" style={{ paddingLeft: `${depth * 1.1}em` }}>
                  {span.name ?? span.spanId} <span class="muted">{span.serviceName}</span>
                </span>
                <span class="span-track" aria-hidden="true">
                  <span class="span-bar" style={{ left: `${Math.min(offset, 99.7)}%`, width: `${Math.min(width, 100 - Math.min(offset, 99.7))}%` }} />
                </span>
                <span class="num">{span.durationMs === null ? '—' : formatMs(span.durationMs)}</span>
              </summary>
              <Json value={{ spanId: span.spanId, parentSpanId: span.parentSpanId, startedAt: span.startedAt, ...span.data }} />
            </details>
          </li>
        )
      })}
    </ol>
  )
}
