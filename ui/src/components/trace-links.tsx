import { queryString, usePaged, type Paged } from '../api.ts'
import { Badge } from '../components.tsx'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { traceLogsHref } from './log-links.tsx'
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
 * A trace's way to the other signals that share its id: its logs (over the trace's own time) and
 * the errors that happened in it, each linked to its group and to the span it happened in.
 */
export function TraceSignals({ project, trace, errors }: { project: string; trace: { traceId: string; startedAt: string; durationMs: number }; errors: Paged<TraceOccurrence> }) {
  return (
    <section aria-label="Signals of this trace">
      <p class="signal-links">
        <Link href={traceLogsHref(project, trace.traceId, trace.startedAt, trace.durationMs)}>Logs of this trace</Link>
        <span>{errors.loading ? 'Looking for errors…' : errors.items.length === 0 ? 'No error in this trace.' : `${errors.items.length}${errors.nextCursor ? '+' : ''} errors in this trace:`}</span>
      </p>
      {errors.items.length > 0 && (
        <ul class="trace-errors">
          {errors.items.map((occurrence) => (
            <li key={occurrence.id}>
              <ErrorOccurrenceLink project={project} occurrence={occurrence} /> <Badge value={occurrence.groupStatus} />{' '}
              {occurrence.spanId && (
                <span class="muted">
                  in span <Link href={`/p/${project}/traces/${encodeURIComponent(trace.traceId)}?span=${encodeURIComponent(occurrence.spanId)}`}><code>{occurrence.spanId}</code></Link> ·{' '}
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
