import { api, queryString, useGet } from '../api.ts'
import { useAction } from '../components.tsx'
import { navigate, withParams } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { Histogram, type Marker } from './histogram.tsx'
import { bucketSecondsFor, type TimeRange } from './time.tsx'

type ErrorGroup = components['schemas']['ErrorGroup']

type OccurrenceHistogram = components['schemas']['ErrorOccurrenceHistogram']

/** Error events over the range (stored occurrences per bucket, one read made once `readWhen`), with deploys as markers when given. */
export function ErrorVolume({ project, range, markers, title, readWhen = true }: { project: string; range: TimeRange; markers?: Marker[]; title?: string; readWhen?: boolean }) {
  const bucketSeconds = bucketSecondsFor(range.spanMs)
  const histogram = useGet<OccurrenceHistogram>(readWhen ? `/api/errors/histogram${queryString({ project_id: project, from: range.from, to: range.to, bucket_seconds: bucketSeconds })}` : null)
  if (!histogram.data) return null
  return (
    <Histogram
      title={`${title ?? 'Error events'}, ${bucketSeconds >= 3600 ? `${bucketSeconds / 3600} h` : `${bucketSeconds / 60} min`} per bar (${histogram.data.total.toLocaleString()} stored in the range)`}
      buckets={histogram.data.data.map((bucket) => ({ start: bucket.start, counts: { errors: bucket.count } }))}
      bucketMs={bucketSeconds * 1000}
      series={['errors']}
      tone={() => 'errors'}
      markers={markers}
      onSelect={(fromMs, toMs) => navigate(withParams({ range: undefined, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() }))}
    />
  )
}

/** Triage of the groups selected on the stream at once: resolve, ignore, or merge them into the first selected. */
export function BulkActions({ selected, groups, onDone }: { project: string; selected: string[]; groups: ErrorGroup[]; onDone(): void }) {
  const [error, run] = useAction()
  const chosen = groups.filter((group) => selected.includes(group.fingerprint))
  const setStatus = (status: 'resolved' | 'ignored' | 'unresolved') =>
    run(async () => {
      // One request per group: the API triages one group per call; a failure stops and is shown.
      for (const group of chosen) await api('PATCH', `/api/errors/groups/${group.fingerprint}`, { status })
      onDone()
    })
  const merge = () =>
    run(async () => {
      const [into, ...others] = chosen
      await api('POST', `/api/errors/groups/${into.fingerprint}/merge`, { fingerprints: others.map((group) => group.fingerprint) })
      onDone()
    })
  return (
    <div class="bulk" role="group" aria-label="Selected groups">
      <span>{chosen.length === 0 ? 'Select groups to triage them together.' : `${chosen.length} selected:`}</span>
      <button type="button" disabled={chosen.length === 0} onClick={() => setStatus('resolved')}>
        Resolve selected
      </button>
      <button type="button" disabled={chosen.length === 0} onClick={() => setStatus('ignored')}>
        Ignore selected
      </button>
      <button type="button" disabled={chosen.length === 0} onClick={() => setStatus('unresolved')}>
        Reopen selected
      </button>
      <button type="button" disabled={chosen.length < 2} onClick={merge} title="the others join the first selected">
        Merge selected
      </button>
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
    </div>
  )
}
