import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { Badge } from '../components.tsx'
import { navigate, withParams } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { SpanErrors, type TraceOccurrence } from '../components/trace-links.tsx'

export type Span = components['schemas']['Span']

/** What the waterfall draws of a trace. */
export type WaterfallTrace = Pick<components['schemas']['TraceDetail'], 'startedAt' | 'durationMs' | 'services' | 'spans'>

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms * 10) / 10} ms`
}

/** Distinct on light backgrounds and for the common colour-vision deficiencies (Okabe–Ito, then Tableau). */
const SERVICE_COLOURS = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#7f7f7f', '#bcbd22', '#8c564b', '#17becf']

/** One colour per service of the trace, in the order the API lists them, so the legend and the bars agree. */
export function serviceColours(services: string[]): Map<string | null, string> {
  return new Map<string | null, string>([...services.map((service, index) => [service, SERVICE_COLOURS[index % SERVICE_COLOURS.length]] as const), [null, '#9aa3b1']])
}

const HTTP_STATUS_KEYS = ['http.response.status_code', 'http.status_code']

/** Why a span failed, or null: OTLP status `error` (with its message), or an HTTP 5xx — the same rule as the API's `error` filter. */
export function spanError(span: Span): string | null {
  const status = span.data.status as { code?: unknown; message?: unknown } | undefined
  if (status?.code === 'error') return typeof status.message === 'string' && status.message ? status.message : 'status error'
  const attributes = (span.data.attributes ?? {}) as Record<string, unknown>
  for (const key of HTTP_STATUS_KEYS) {
    const code = Number(attributes[key])
    if (code >= 500 && code <= 599) return `HTTP ${code}`
  }
  return null
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

/** Round tick steps (1, 2, 5 × 10ⁿ ms) giving about five ticks over `total`. */
export function axisTicks(total: number): number[] {
  if (total <= 0) return [0]
  const rough = total / 5
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough)!
  const ticks: number[] = []
  for (let tick = 0; tick <= total + step * 1e-9; tick += step) ticks.push(tick)
  return ticks
}

export function ServiceLegend({ colours }: { colours: Map<string | null, string> }) {
  return (
    <ul class="legend" aria-label="Services">
      {[...colours].filter(([service]) => service !== null).map(([service, colour]) => (
        <li>
          <span class="swatch" style={{ background: colour }} aria-hidden="true" /> {service}
        </li>
      ))}
    </ul>
  )
}

interface WaterfallProps {
  project: string
  trace: WaterfallTrace
  /** the span a link named (`?span=`): opened, marked and scrolled to */
  currentSpanId?: string
  /** the error occurrences raised in each span, by span id */
  errorsBySpan: ReadonlyMap<string, TraceOccurrence[]>
}

export function Waterfall({ project, trace, currentSpanId, errorsBySpan }: WaterfallProps) {
  const start = Date.parse(trace.startedAt)
  const total = trace.durationMs || 1
  const colours = serviceColours(trace.services)
  const ticks = axisTicks(trace.durationMs)
  const currentSpan = useRef<HTMLLIElement>(null)
  // A span opened here is already in view; one a link named is scrolled to.
  const openedHere = useRef<string | undefined>(undefined)
  useEffect(() => {
    if (openedHere.current !== currentSpanId) currentSpan.current?.scrollIntoView({ block: 'center' })
  }, [currentSpanId, trace])
  // Opening a span puts it in the URL (`?span=`), so that what a person looks at can be shared or reloaded.
  const toggled = (spanId: string, open: boolean) => {
    if (open === (spanId === currentSpanId)) return
    openedHere.current = open ? spanId : undefined
    navigate(withParams({ span: open ? spanId : undefined }), { replace: true })
  }
  return (
    <>
      <ServiceLegend colours={colours} />
      <div class="waterfall-box">
        <div class="waterfall-axis" aria-hidden="true">
          <span />
          <span class="axis-track">
            {ticks.map((tick) => (
              <span class="tick" style={{ left: `${(tick / total) * 100}%` }}>
                {formatMs(tick)}
              </span>
            ))}
          </span>
          <span />
        </div>
        <ol class="waterfall" aria-label="Spans in start order, children under their parent">
          {treeOrder(trace.spans).map(({ span, depth }) => {
            const offset = Math.min(((Date.parse(span.startedAt) - start) / total) * 100, 99.7)
            const width = Math.min(Math.max(((span.durationMs ?? 0) / total) * 100, 0.3), 100 - offset)
            const error = spanError(span)
            const occurrences = errorsBySpan.get(span.spanId) ?? []
            const current = span.spanId === currentSpanId
            return (
              <li class={error ? 'span-error' : undefined} aria-current={current ? 'true' : undefined} ref={current ? currentSpan : undefined}>
                <details open={current} onToggle={(event) => toggled(span.spanId, event.currentTarget.open)}>
                  <summary>
                    <span class="span-name" style={{ paddingLeft: `${Math.min(depth, 12) * 0.9}em` }}>
                      {error && <Badge value="error" tone="failed" />}
                      {occurrences.length > 0 && <Badge value={`${occurrences.length} exception${occurrences.length === 1 ? '' : 's'}`} tone="failed" />}
                      {span.name ?? span.spanId} <span class="muted">{span.serviceName}</span>
                    </span>
                    <span class="span-track" aria-hidden="true">
                      {ticks.map((tick) => (
                        <span class="grid" style={{ left: `${(tick / total) * 100}%` }} />
                      ))}
                      <span class="span-bar" style={{ left: `${offset}%`, width: `${width}%`, background: colours.get(span.serviceName) ?? colours.get(null) }} />
                    </span>
                    <span class="num">{span.durationMs === null ? '—' : formatMs(span.durationMs)}</span>
                  </summary>
                  <SpanDetail span={span} error={error} offsetMs={Date.parse(span.startedAt) - start}>
                    {occurrences.length > 0 && <SpanErrors project={project} occurrences={occurrences} />}
                  </SpanDetail>
                </details>
              </li>
            )
          })}
        </ol>
      </div>
    </>
  )
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** A span's facts and attributes as rows to read, not a JSON dump; nested values stay JSON in their cell; `children` (its errors) first. */
function SpanDetail({ span, error, offsetMs, children }: { span: Span; error: string | null; offsetMs: number; children?: ComponentChildren }) {
  const { attributes, status, events, links, traceId: _t, spanId: _s, parentSpanId: _p, serviceName: _n, name: _m, durationMs: _d, ...rest } = span.data as Record<string, unknown>
  const facts: [string, unknown][] = [
    ['span id', span.spanId],
    ['parent span id', span.parentSpanId ?? '— (root)'],
    ['service', span.serviceName ?? '—'],
    ['started', `${span.startedAt} (+${formatMs(offsetMs)})`],
    ['status', error ? `error: ${error}` : ((status as { code?: string } | undefined)?.code ?? 'unset')],
    ...Object.entries(rest),
  ]
  const attributeRows = Object.entries((attributes ?? {}) as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))
  return (
    <div class="span-detail">
      {children}
      <KeyValues title="Span" rows={facts} />
      {attributeRows.length > 0 && <KeyValues title="Attributes" rows={attributeRows} />}
      {Array.isArray(events) && events.length > 0 && <KeyValues title="Events" rows={events.map((event: any) => [`${event.name} at ${event.ts}`, event.attributes])} />}
      {Array.isArray(links) && links.length > 0 && <KeyValues title="Links" rows={links.map((link: any) => [`${link.traceId} / ${link.spanId}`, link.attributes])} />}
    </div>
  )
}

function KeyValues({ title, rows }: { title: string; rows: [string, unknown][] }) {
  return (
    <div class="scroll">
      <table class="key-values">
        <caption>{title}</caption>
        <tbody>
          {rows.map(([key, value]) => (
            <tr>
              <th scope="row">
                <code>{key}</code>
              </th>
              <td>
                <code>{text(value)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
