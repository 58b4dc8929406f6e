import { useEffect, useState } from 'preact/hooks'
import { api, queryString } from '../api.ts'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { ErrorVolume } from './error-stream.tsx'
import type { Marker } from './histogram.tsx'
import type { TimeRange } from './time.tsx'

type DeployEvent = components['schemas']['DeployEvent']

type OccurrenceHistogram = components['schemas']['ErrorOccurrenceHistogram']

const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS
/** The errors histogram's most buckets a read (src/http/histogram.ts). */
const MAX_BUCKETS = 1000

/** The release a deploy shipped, as error events name it: its `release` field, else its `version` (the API's `release` filter reads the same). */
export function deployRelease(deploy: DeployEvent): string | undefined {
  const release = (deploy.data as Record<string, unknown>).release
  return typeof release === 'string' && release !== '' ? release : deploy.data.version
}

/** The error groups first seen in the deploy's release, from its deploy time on: what it introduced. */
export function NewErrorsLink({ project, deploy }: { project: string; deploy: DeployEvent }) {
  const release = deployRelease(deploy)
  if (!release) return <span class="muted">—</span>
  return (
    <span class="signal-links">
      <Link href={`/p/${project}/errors${queryString({ first_release: release, from: deploy.ts })}`} title={`error groups first seen in ${release}`}>
        New in {release}
      </Link>
      <Link href={`/p/${project}/errors${queryString({ release, from: deploy.ts })}`} title={`error groups seen in ${release}`}>
        All in it
      </Link>
    </span>
  )
}

/**
 * The error rate over the range with each change (deploys, configuration, flags) as a marker: a jump right after
 * one shows. Read once the deploys have answered (`readWhen`), so that the list's first rows need not wait behind it.
 */
export function DeployErrors({ project, range, markers, readWhen }: { project: string; range: TimeRange; markers: Marker[]; readWhen: boolean }) {
  return <ErrorVolume project={project} range={range} readWhen={readWhen} title="Error events around deploys" markers={markers} />
}

/** Error events stored in the hour before each deploy and in the hour after it, by deploy id. */
export type ErrorsAround = Map<string, { before: number; after: number }>

/**
 * The counts of `ErrorsAroundDeploy` for a page of deploys: one histogram of minute buckets per cluster of
 * deploys that fit MAX_BUCKETS minutes with their hours around, so a page costs a read or a few. Two reads per
 * row (a histogram of the exact hour each) made 100 requests for 50 deploys, and the page's first row waited
 * for them: 611 ms against 227 in `npm run bench -- ui` at 10M events. Windows start at the deploy's minute.
 */
export function useErrorsAroundDeploys(project: string, deploys: DeployEvent[]): ErrorsAround | undefined {
  const minutes = [...new Set(deploys.map((deploy) => Math.floor(Date.parse(deploy.ts) / MINUTE_MS) * MINUTE_MS))].sort((a, b) => a - b)
  const key = minutes.join(',')
  const [counts, setCounts] = useState<Map<number, { before: number; after: number }>>()
  useEffect(() => {
    let current = true
    const clusters: number[][] = []
    for (const minute of minutes) {
      const cluster = clusters[clusters.length - 1]
      if (cluster && minute + HOUR_MS - (cluster[0] - HOUR_MS) <= MAX_BUCKETS * MINUTE_MS) cluster.push(minute)
      else clusters.push([minute])
    }
    Promise.all(
      clusters.map((cluster) => {
        const window = { project_id: project, from: new Date(cluster[0] - HOUR_MS).toISOString(), to: new Date(cluster[cluster.length - 1] + HOUR_MS).toISOString(), bucket_seconds: MINUTE_MS / 1000 }
        return api<OccurrenceHistogram>('GET', `/api/errors/histogram${queryString(window)}`)
      }),
    ).then(
      (histograms) => {
        const perMinute = new Map(histograms.flatMap((histogram) => histogram.data.map((bucket) => [Date.parse(bucket.start), bucket.count] as const)))
        const sum = (from: number, to: number) => {
          let total = 0
          for (let minute = from; minute < to; minute += MINUTE_MS) total += perMinute.get(minute) ?? 0
          return total
        }
        if (current) setCounts(new Map(minutes.map((minute) => [minute, { before: sum(minute - HOUR_MS, minute), after: sum(minute, minute + HOUR_MS) }])))
      },
      () => current && setCounts(new Map()),
    )
    return () => {
      current = false
    }
  }, [project, key])
  if (!counts) return undefined
  return new Map(deploys.map((deploy) => [deploy.id, counts.get(Math.floor(Date.parse(deploy.ts) / MINUTE_MS) * MINUTE_MS) ?? { before: 0, after: 0 }]))
}

/** Error events stored in the hour before a deploy and in the hour after it: the jump a bad release makes, on its own row. */
export function ErrorsAroundDeploy({ deploy, around }: { deploy: DeployEvent; around: ErrorsAround | undefined }) {
  const counts = around?.get(deploy.id)
  const afterSoFar = Date.now() < Date.parse(deploy.ts) + HOUR_MS
  return (
    <span title={`error events stored in the hour before this deploy and in the hour after it, from its minute${afterSoFar ? ' (not over yet)' : ''}`}>
      {counts?.before ?? '…'} before · {counts?.after ?? '…'} after{afterSoFar ? ' so far' : ''}
    </span>
  )
}
