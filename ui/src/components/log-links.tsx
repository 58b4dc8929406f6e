import { queryString, useGet } from '../api.ts'
import { Link, navigate, withParams } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { Histogram, type Marker } from './histogram.tsx'
import { bucketSecondsFor, type TimeRange } from './time.tsx'

type LogEvent = components['schemas']['LogEvent']

type LevelHistogram = components['schemas']['LogLevelHistogram']

const LEVEL_ORDER = ['fatal', 'error', 'warn', 'warning', 'info', 'debug', 'trace']
const levelName = (level: string | null) => level ?? 'no level'
const levelTone = (name: string) => `level-${name === 'no level' ? 'none' : name.toLowerCase()}`

/** Log volume by level over the range, one read (made once `readWhen`); a click on a bar narrows the range to it. */
export function LogVolume({ project, range, module, markers, readWhen = true }: { project: string; range: TimeRange; module?: string; markers?: Marker[]; readWhen?: boolean }) {
  const bucketSeconds = bucketSecondsFor(range.spanMs)
  const histogram = useGet<LevelHistogram>(readWhen ? `/api/modules/logs/histogram${queryString({ project_id: project, from: range.from, to: range.to, bucket_seconds: bucketSeconds, module })}` : null)
  if (!histogram.data || histogram.data.total === 0) return null
  const present = [...new Set(histogram.data.data.flatMap((bucket) => bucket.levels.map((row) => levelName(row.level))))]
  const series = present.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  return (
    <Histogram
      title={`Log volume by level, ${bucketSeconds >= 3600 ? `${bucketSeconds / 3600} h` : `${bucketSeconds / 60} min`} per bar`}
      buckets={histogram.data.data.map((bucket) => ({ start: bucket.start, counts: Object.fromEntries(bucket.levels.map((row) => [levelName(row.level), row.count])) }))}
      bucketMs={bucketSeconds * 1000}
      series={series}
      tone={levelTone}
      markers={markers}
      onSelect={(fromMs, toMs) => navigate(withParams({ range: undefined, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() }))}
    />
  )
}

function rank(level: string): number {
  const index = LEVEL_ORDER.indexOf(level.toLowerCase())
  return index === -1 ? LEVEL_ORDER.length : index
}

/** The ids a log line shares with other signals, as links: its trace, and the other logs of its request. */
export function LogTraceLinks({ project, log }: { project: string; log: LogEvent }) {
  const data = log.data as Record<string, unknown>
  const fields = (log.data.fields ?? {}) as Record<string, unknown>
  const traceId = typeof data.traceId === 'string' ? data.traceId : typeof fields.traceId === 'string' ? fields.traceId : undefined
  const requestId = typeof fields.requestId === 'string' ? fields.requestId : undefined
  if (!traceId && !requestId) return <span class="muted">—</span>
  return (
    <span class="signal-links">
      {traceId && (
        <Link href={`/p/${project}/traces/${encodeURIComponent(traceId)}`} title={`trace ${traceId}`}>
          Trace {traceId.slice(0, 8)}
        </Link>
      )}
      {requestId && (
        <Link href={withParams({ 'field.requestId': requestId })} title={`every log of request ${requestId}`}>
          Request {requestId}
        </Link>
      )}
    </span>
  )
}

/** Shown while the logs are narrowed to one trace: which, a way to it, and a way out. */
export function TraceFilterChip({ project, traceId }: { project: string; traceId: string }) {
  return (
    <p class="signal-links">
      <span>
        Logs of trace <code>{traceId}</code>
      </span>
      <Link href={`/p/${project}/traces/${encodeURIComponent(traceId)}`}>Open the trace</Link>
      <button type="button" class="chip" onClick={() => navigate(withParams({ trace_id: undefined }))} aria-label={`Remove the filter on trace ${traceId}`}>
        trace = {traceId.slice(0, 8)}… ✕
      </button>
    </p>
  )
}

/** The logs of a trace: its id, over the trace's own time give or take a minute (the id is looked for in that window only). */
export function traceLogsHref(project: string, traceId: string, startedAt: string, durationMs: number): string {
  const start = Date.parse(startedAt)
  return `/p/${project}/logs${queryString({ trace_id: traceId, from: new Date(start - 60_000).toISOString(), to: new Date(start + durationMs + 60_000).toISOString() })}`
}
