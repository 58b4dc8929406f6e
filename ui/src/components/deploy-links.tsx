import { queryString, useGet } from '../api.ts'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { ErrorVolume } from './error-stream.tsx'
import type { TimeRange } from './time.tsx'

type DeployEvent = components['schemas']['DeployEvent']

type OccurrenceHistogram = components['schemas']['ErrorOccurrenceHistogram']

const HOUR_MS = 3_600_000

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

/** The error rate over the range with each deploy shown listed as a marker: a jump right after one shows. */
export function DeployErrors({ project, range, deploys }: { project: string; range: TimeRange; deploys: DeployEvent[] }) {
  return (
    <ErrorVolume
      project={project}
      range={range}
      title="Error events around deploys"
      markers={deploys.map((deploy) => ({
        ms: Date.parse(deploy.ts),
        label: `${deploy.data.service} ${deploy.data.version ?? ''}`.trim(),
        tone: /fail|roll/i.test(deploy.data.status ?? '') ? 'failed' : undefined,
      }))}
    />
  )
}

/** Error events stored in the hour before a deploy and in the hour after it: the jump a bad release makes, on its own row. */
export function ErrorsAroundDeploy({ project, deploy }: { project: string; deploy: DeployEvent }) {
  const deployedMs = Date.parse(deploy.ts)
  const before = useErrorEventCount(project, deployedMs - HOUR_MS, deployedMs)
  const after = useErrorEventCount(project, deployedMs, deployedMs + HOUR_MS)
  const afterSoFar = Date.now() < deployedMs + HOUR_MS
  return (
    <span title={`error events stored in the hour before this deploy and in the hour after it${afterSoFar ? ' (not over yet)' : ''}`}>
      {before ?? '…'} before · {after ?? '…'} after{afterSoFar ? ' so far' : ''}
    </span>
  )
}

/** Error events stored in [fromMs, toMs), which spans at most two buckets of an hour: the histogram's total counts it exactly. */
function useErrorEventCount(project: string, fromMs: number, toMs: number): number | undefined {
  const between = { project_id: project, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), bucket_seconds: HOUR_MS / 1000 }
  return useGet<OccurrenceHistogram>(`/api/errors/histogram${queryString(between)}`).data?.total
}
