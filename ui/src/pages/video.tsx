import { queryString, usePaged } from '../api.ts'
import { Badge, Filters, PagedTable, Time } from '../components.tsx'
import { Link, useFilters } from '../router.tsx'
import { StateWithHistory } from './state-history.tsx'
import type { components } from '../api-types.generated.ts'

type Job = components['schemas']['VideoJob']
type JobEvent = components['schemas']['VideoJobEvent']

const Status = ({ status }: { status: string | null }) => (status ? <Badge value={status} /> : <span class="muted">—</span>)
const Url = ({ url }: { url: string | null }) => (url ? <a href={url} rel="noreferrer noopener" target="_blank">{url}</a> : <span class="muted">—</span>)

export function VideoJobsPage({ project }: { project: string }) {
  const filters = useFilters(['status'])
  const list = usePaged<Job>(`/api/video/jobs${queryString({ project_id: project, ...filters })}`)
  return (
    <section>
      <h1>Video jobs</h1>
      <Filters fields={[{ name: 'status', label: 'Latest status' }]} />
      <PagedTable
        list={list}
        what="video jobs"
        emptyText="No video job matches."
        rowKey={(job) => job.jobId}
        columns={[
          { title: 'Job', render: (job) => <Link href={`/p/${project}/video/${encodeURIComponent(job.jobId)}`}>{job.jobId}</Link> },
          { title: 'Status', render: (job) => <Status status={job.status} /> },
          { title: 'Target', render: (job) => <Url url={job.targetUrl} /> },
          { title: 'Artifact', render: (job) => <Url url={job.artifactUrl} /> },
          { title: 'Updated', render: (job) => <Time iso={job.updatedAt} /> },
        ]}
      />
    </section>
  )
}

export function VideoJobPage({ project, job }: { project: string; job: string }) {
  return (
    <StateWithHistory<components['schemas']['VideoJobDetail'], JobEvent>
      path={`/api/video/jobs/${encodeURIComponent(job)}${queryString({ project_id: project })}`}
      back={[`/p/${project}/video`, 'All video jobs']}
      what="the video job"
      title={(state) => state.jobId}
      facts={(state) => (
        <>
          <Status status={state.status} /> · target <Url url={state.targetUrl} /> · artifact <Url url={state.artifactUrl} /> · created <Time iso={state.createdAt} />
        </>
      )}
      rowKey={(event) => event.eventId}
      columns={[
        { title: 'When', render: (event) => <Time iso={event.ts} /> },
        { title: 'Status', render: (event) => <Status status={event.status} /> },
        { title: 'Artifact', render: (event) => <Url url={event.artifactUrl} /> },
      ]}
    />
  )
}
