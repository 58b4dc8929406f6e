import { queryString, usePaged } from '../api.ts'
import { Badge, Filters, PagedTable, Time } from '../components.tsx'
import { Link, useFilters, withParams } from '../router.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { DeployErrors, deployRelease, ErrorsAroundDeploy, NewErrorsLink, useErrorsAroundDeploys } from '../components/deploy-links.tsx'
import { useChanges, WithChanges } from '../components/changes.tsx'
import { CommitLink } from '../components/commits.tsx'
import type { components } from '../api-types.generated.ts'
import { percent, useReleaseHealth } from './releases.tsx'

type LatestDeploy = components['schemas']['LatestDeploy']
type DeployEvent = components['schemas']['DeployEvent']

export function DeploysPage({ project }: { project: string }) {
  const { service, environment, status, release } = useFilters(['service', 'environment', 'status', 'release'])
  const range = useTimeRange('7d')
  const latest = usePaged<LatestDeploy>(`/api/modules/deploys/latest${queryString({ project_id: project, service, environment })}`)
  const history = usePaged<DeployEvent>(`/api/modules/deploys/events${queryString({ project_id: project, service, environment, status, release, from: range.from, to: range.listTo })}`)
  const errorsAround = useErrorsAroundDeploys(project, history.items)
  const health = useReleaseHealth(project, range.from, range.listTo)
  const changes = useChanges(project, range, { service, environment }, history.answered)
  return (
    <section>
      <h1>Deploys</h1>
      <Filters
        fields={[
          { name: 'service', label: 'Service' },
          { name: 'environment', label: 'Environment' },
          { name: 'status', label: 'Status (history)' },
          { name: 'release', label: 'Release (history)' },
        ]}
      />
      <TimeRangeControl range={range} />
      <WithChanges project={project} changes={changes}>
        <DeployErrors project={project} range={range} markers={changes.markers} readWhen={history.answered} />
      </WithChanges>
      <h2>Latest per service and environment</h2>
      <PagedTable
        list={latest}
        what="deploy targets"
        emptyText="No deploy events yet."
        rowKey={(deploy) => `${deploy.service}\u0000${deploy.environment}`}
        columns={[
          { title: 'Service', render: (deploy) => <Link href={withParams({ service: deploy.service, environment: deploy.environment ?? undefined })}>{deploy.service}</Link> },
          { title: 'Environment', render: (deploy) => deploy.environment ?? '—' },
          { title: 'Version', render: (deploy) => deploy.version ?? '—' },
          { title: 'Status', render: (deploy) => (deploy.status ? <Badge value={deploy.status} tone={deploy.failed ? 'failed' : 'succeeded'} /> : '—') },
          { title: 'Commit', render: (deploy) => <CommitLink project={project} commit={deploy.commit} /> },
          { title: 'Deployed', render: (deploy) => <Time iso={deploy.deployedAt} /> },
          { title: 'Deploys', numeric: true, render: (deploy) => deploy.deploys },
        ]}
      />
      <h2>History</h2>
      <PagedTable
        list={history}
        what="deploys"
        emptyText="No deploy matches."
        rowKey={(event) => event.id}
        columns={[
          { title: 'When', render: (event) => <Time iso={event.ts} /> },
          { title: 'Service', render: (event) => event.data.service },
          { title: 'Environment', render: (event) => event.data.environment ?? '—' },
          { title: 'Version', render: (event) => event.data.version ?? '—' },
          { title: 'Status', render: (event) => (event.data.status ? <Badge value={event.data.status} /> : '—') },
          { title: 'Commit', render: (event) => <CommitLink project={project} commit={event.data.commit} /> },
          { title: 'Release', render: (event) => deployRelease(event) ?? '—' },
          { title: 'Errors', render: (event) => <NewErrorsLink project={project} deploy={event} /> },
          {
            title: 'Crash-free sessions · users',
            render: (event) => {
              const release = deployRelease(event)
              const row = release === undefined ? undefined : health.get(`${release}\u0000${event.data.environment ?? ''}`)
              if (!row) return <span class="muted">no sessions</span>
              return (
                <Link href={`/p/${project}/releases${queryString({ release, environment: event.data.environment })}`} title={`${row.sessions} sessions, ${row.users} users`}>
                  {percent(row.crashFreeSessions)} · {percent(row.crashFreeUsers)}
                </Link>
              )
            },
          },
          { title: 'Error events, hour before · after', render: (event) => <ErrorsAroundDeploy deploy={event} around={errorsAround} /> },
        ]}
      />
    </section>
  )
}
