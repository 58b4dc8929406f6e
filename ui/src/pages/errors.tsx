import { api, queryString, useGet, usePaged } from '../api.ts'
import { Badge, BarChart, Filters, Json, LoadState, PagedTable, Table, Time, useAction } from '../components.tsx'
import { useCanWrite } from '../identity.ts'
import { Link, useFilters } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

type Schemas = components['schemas']
type GroupStatus = Schemas['ErrorGroupStatus']
type ErrorGroup = Schemas['ErrorGroup']
type Occurrence = Schemas['ErrorOccurrence']
type ErrorGroupDetail = Schemas['ErrorGroupDetail']

const FILTERS = ['q', 'status', 'environment', 'release', 'service', 'sort']

/** Fourteen small bars, one per UTC day, so that a spike or a quiet group shows in the stream itself. */
function DaySparkline({ days }: { days: ErrorGroup['countsPerDay'] }) {
  const max = Math.max(...days.map((day) => day.count), 1)
  const total = days.reduce((sum, day) => sum + day.count, 0)
  return (
    <svg class="sparkline" viewBox="0 0 56 16" width="56" height="16" role="img" aria-label={`${total} in the last ${days.length} days`}>
      {days.map((day, index) => (
        <rect x={index * 4} y={16 - Math.max((day.count / max) * 16, day.count ? 1 : 0)} width="3" height={Math.max((day.count / max) * 16, day.count ? 1 : 0)} class="bar">
          <title>{`${day.date}: ${day.count}`}</title>
        </rect>
      ))}
    </svg>
  )
}

function StatusBadges({ group }: { group: Pick<ErrorGroup, 'status' | 'regressed'> }) {
  return (
    <>
      <Badge value={group.status} />
      {group.regressed && <Badge value="regressed" />}
    </>
  )
}

export function ErrorGroupsPage({ project }: { project: string }) {
  const filters = useFilters(FILTERS)
  const list = usePaged<ErrorGroup>(`/api/errors/groups${queryString({ project_id: project, ...filters })}`)
  return (
    <section>
      <h1>Errors</h1>
      <Filters
        fields={[
          { name: 'q', label: 'Search name or message' },
          {
            name: 'status',
            label: 'Status',
            kind: 'select',
            options: [
              ['', 'any'],
              ['unresolved', 'unresolved'],
              ['resolved', 'resolved'],
              ['ignored', 'ignored'],
            ],
          },
          { name: 'environment', label: 'Environment' },
          { name: 'release', label: 'Release' },
          { name: 'service', label: 'Service' },
          {
            name: 'sort',
            label: 'Sort by',
            kind: 'select',
            options: [
              ['', 'last seen'],
              ['first_seen', 'first seen'],
              ['count', 'most frequent'],
            ],
          },
        ]}
      />
      <PagedTable
        list={list}
        what="error groups"
        emptyText="No error group matches: nothing was captured, or the filters exclude everything."
        rowKey={(group) => group.fingerprint}
        columns={[
          { title: 'Status', render: (group) => <StatusBadges group={group} /> },
          {
            title: 'Error',
            render: (group) => (
              <Link href={`/p/${project}/errors/${group.fingerprint}`}>
                <strong>{group.name}</strong> <span class="message">{group.message}</span>
              </Link>
            ),
          },
          { title: 'Events', numeric: true, render: (group) => group.count.toLocaleString() },
          { title: 'Last 14 days', render: (group) => <DaySparkline days={group.countsPerDay} /> },
          { title: 'Last seen', render: (group) => <Time iso={group.lastSeen} /> },
          { title: 'First seen', render: (group) => <Time iso={group.firstSeen} /> },
          { title: 'Environments', render: (group) => group.environments.join(', ') },
        ]}
      />
    </section>
  )
}

export function ErrorGroupPage({ project, fingerprint }: { project: string; fingerprint: string }) {
  const canWrite = useCanWrite()
  const detail = useGet<ErrorGroupDetail>(`/api/errors/groups/${fingerprint}`)
  const [error, run] = useAction()
  const group = detail.data
  const triage = (status: GroupStatus) => run(() => api('PATCH', `/api/errors/groups/${fingerprint}`, { status }).then(detail.reload))
  return (
    <section>
      <p>
        <Link href={`/p/${project}/errors`}>← All errors</Link>
      </p>
      <LoadState loading={detail.loading && !group} error={detail.error} what="the error group" />
      {group && (
        <>
          <h1>
            {group.name}: <span class="message">{group.message}</span>
          </h1>
          <p class="facts">
            <StatusBadges group={group} /> {group.count.toLocaleString()} events · first seen <Time iso={group.firstSeen} /> · last seen <Time iso={group.lastSeen} />
          </p>
          {canWrite && (
            <div class="actions" role="group" aria-label="Triage">
              {(['resolved', 'ignored', 'unresolved'] as const)
                .filter((status) => status !== group.status)
                .map((status) => (
                  <button type="button" onClick={() => triage(status)}>
                    {{ resolved: 'Resolve', ignored: 'Ignore', unresolved: 'Reopen' }[status]}
                  </button>
                ))}
              {error && <span role="alert" class="error">{error}</span>}
            </div>
          )}
          <dl class="meta">
            <dt>Environments</dt>
            <dd>{group.environments.join(', ') || '—'}</dd>
            <dt>Releases</dt>
            <dd>{group.releases.join(', ') || '—'}</dd>
            <dt>Services</dt>
            <dd>{group.services.join(', ') || '—'}</dd>
            <dt>Fingerprint</dt>
            <dd>
              <code>{group.fingerprint}</code>
            </dd>
          </dl>
          <BarChart title="Events per day, last 14 days (UTC)" bars={group.countsPerDay.map((day) => ({ label: day.date.slice(5), value: day.count }))} />
          {group.occurrences[0] && <LatestOccurrence occurrence={group.occurrences[0]} />}
          <h2>Recent occurrences</h2>
          <Table
            items={group.occurrences}
            rowKey={(occurrence) => occurrence.id}
            columns={[
              { title: 'When', render: (occurrence) => <Time iso={occurrence.timestamp} /> },
              { title: 'Message', render: (occurrence) => occurrence.message },
              { title: 'Release', render: (occurrence) => occurrence.release ?? '—' },
              { title: 'Environment', render: (occurrence) => occurrence.environment ?? '—' },
              { title: 'Service', render: (occurrence) => occurrence.service ?? '—' },
            ]}
          />
        </>
      )}
    </section>
  )
}

function LatestOccurrence({ occurrence }: { occurrence: Occurrence }) {
  return (
    <>
      <h2>Latest occurrence</h2>
      <h3>Stack trace</h3>
      {occurrence.frames?.length ? (
        <ol class="frames">
          {occurrence.frames.map((frame) => (
            <li class={frame.inApp ? 'in-app' : undefined}>
              <code>{frame.function ?? '<anonymous>'}</code> <span class="muted">{[frame.module ?? frame.filename, frame.lineno, frame.colno].filter((part) => part !== null).join(':')}</span>
              {frame.inApp && <Badge value="in app" tone="inapp" />}
            </li>
          ))}
        </ol>
      ) : (
        <pre class="stack">{occurrence.stack ?? 'No stack trace was captured.'}</pre>
      )}
      {occurrence.request && (
        <>
          <h3>Request</h3>
          <Json value={occurrence.request} />
        </>
      )}
      <h3>Metadata</h3>
      {Object.keys(occurrence.metadata).length ? <Json value={occurrence.metadata} /> : <p class="muted">No metadata beyond the known fields.</p>}
    </>
  )
}
