import { queryString, usePaged } from '../api.ts'
import { Badge } from '../components.tsx'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { traceLogsHref } from './log-links.tsx'
import { Time } from './time.tsx'

type TraceOccurrence = components['schemas']['TraceErrorOccurrence']

/**
 * A trace's way to the other signals that share its id: its logs (over the trace's own time) and
 * the errors that happened in it, each linked to its group and to the span it happened in.
 */
export function TraceSignals({ project, trace }: { project: string; trace: { traceId: string; startedAt: string; durationMs: number } }) {
  const errors = usePaged<TraceOccurrence>(`/api/errors/occurrences${queryString({ project_id: project, trace_id: trace.traceId })}`)
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
              <Link href={`/p/${project}/errors/${occurrence.groupFingerprint}?occurrence=${encodeURIComponent(occurrence.id)}`}>
                <strong>{occurrence.name}</strong> <span class="message">{occurrence.message}</span>
              </Link>{' '}
              <Badge value={occurrence.groupStatus} /> {occurrence.spanId && <span class="muted">in span <code>{occurrence.spanId}</code> · </span>}
              <Time iso={occurrence.timestamp} />
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
