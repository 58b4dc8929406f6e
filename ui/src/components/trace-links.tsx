import { queryString, usePaged, type Paged } from '../api.ts'
import { Badge } from '../components.tsx'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { Time } from './time.tsx'

export type TraceOccurrence = components['schemas']['TraceErrorOccurrence']

/** The error occurrences raised in a trace, newest first: one read shared by the trace's signals and its spans. */
export function useTraceErrors(project: string, traceId: string): Paged<TraceOccurrence> {
  return usePaged<TraceOccurrence>(`/api/errors/occurrences${queryString({ project_id: project, trace_id: traceId })}`)
}

/** The occurrences of each span that has any, by span id. */
export function errorsBySpan(occurrences: TraceOccurrence[]): Map<string, TraceOccurrence[]> {
  const bySpan = new Map<string, TraceOccurrence[]>()
  for (const occurrence of occurrences) if (occurrence.spanId) bySpan.set(occurrence.spanId, [...(bySpan.get(occurrence.spanId) ?? []), occurrence])
  return bySpan
}

/** An occurrence on its group's page, shown there as the current one. */
function ErrorOccurrenceLink({ project, occurrence }: { project: string; occurrence: TraceOccurrence }) {
  return (
    <Link href={`/p/${project}/errors/${occurrence.groupFingerprint}?occurrence=${encodeURIComponent(occurrence.id)}`}>
      <strong>{occurrence.name}</strong> <span class="message">{occurrence.message}</span>
    </Link>
  )
}

/**
 * Where to look for the logs of a trace with no stored spans, which only its errors place in time: from
 * 5 min before the first to 5 min after the last; with no error, over the longest preset.
 */
export function spanlessTraceLogsHref(project: string, traceId: string, occurrences: TraceOccurrence[]): string {
  if (occurrences.length === 0) return `/p/${project}/logs${queryString({ trace_id: traceId, range: '30d' })}`
  const times = occurrences.map((occurrence) => Date.parse(occurrence.timestamp))
  const iso = (ms: number) => new Date(ms).toISOString()
  return `/p/${project}/logs${queryString({ trace_id: traceId, from: iso(Math.min(...times) - 5 * 60_000), to: iso(Math.max(...times) + 5 * 60_000) })}`
}

/**
 * A trace's way to the other signals that share its id: its logs (at `logsHref`, over the trace's time) and
 * the errors that happened in it, each linked to its group and to the span it happened in.
 */
export function TraceSignals({ project, traceId, logsHref, errors }: { project: string; traceId: string; logsHref: string; errors: Paged<TraceOccurrence> }) {
  return (
    <section aria-label="Signals of this trace">
      <p class="signal-links">
        <Link href={logsHref}>Logs of this trace</Link>
        <span>{errors.loading ? 'Looking for errors…' : errors.items.length === 0 ? 'No error in this trace.' : `${errors.items.length}${errors.nextCursor ? '+' : ''} errors in this trace:`}</span>
      </p>
      {errors.items.length > 0 && (
        <ul class="trace-errors">
          {errors.items.map((occurrence) => (
            <li key={occurrence.id}>
              <ErrorOccurrenceLink project={project} occurrence={occurrence} /> <Badge value={occurrence.groupStatus} />{' '}
              {occurrence.spanId && (
                <span class="muted">
                  in span <Link href={`/p/${project}/traces/${encodeURIComponent(traceId)}?span=${encodeURIComponent(occurrence.spanId)}`}><code>{occurrence.spanId}</code></Link> ·{' '}
                </span>
              )}
              <Time iso={occurrence.timestamp} />
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

/** The errors raised in one span, each leading to its group. */
export function SpanErrors({ project, occurrences }: { project: string; occurrences: TraceOccurrence[] }) {
  return (
    <ul class="trace-errors" aria-label="Errors raised in this span">
      {occurrences.map((occurrence) => (
        <li key={occurrence.id}>
          <ErrorOccurrenceLink project={project} occurrence={occurrence} /> <Badge value={occurrence.groupStatus} /> <Time iso={occurrence.timestamp} />
        </li>
      ))}
    </ul>
  )
}
