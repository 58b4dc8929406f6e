import { queryString } from '../api.ts'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'
import { ErrorVolume } from './error-stream.tsx'
import type { TimeRange } from './time.tsx'

type DeployEvent = components['schemas']['DeployEvent']

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
