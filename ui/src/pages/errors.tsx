import { useState } from 'preact/hooks'
import { usePaged } from '../api.ts'
import { queryString } from '../api.ts'
import { Filters, PagedTable, Time } from '../components.tsx'
import { useCanWrite } from '../identity.ts'
import { Link, useFilters } from '../router.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { useChanges, WithChanges } from '../components/changes.tsx'
import { BulkActions, ErrorVolume } from '../components/error-stream.tsx'
import { StatusBadges } from '../components/triage.tsx'
import type { components } from '../api-types.generated.ts'

type Schemas = components['schemas']
type ErrorGroup = Schemas['ErrorGroup']

const FILTERS = ['q', 'status', 'assigned', 'assignee', 'environment', 'release', 'first_release', 'service', 'sort']

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

export function ErrorGroupsPage({ project }: { project: string }) {
  const filters = useFilters(FILTERS)
  const range = useTimeRange('7d')
  const list = usePaged<ErrorGroup>(`/api/errors/groups${queryString({ project_id: project, ...filters, from: range.from, to: range.listTo })}`)
  const canWrite = useCanWrite()
  const changes = useChanges(project, range, { service: filters.service, environment: filters.environment }, list.answered)
  const [selected, setSelected] = useState<string[]>([])
  const toggle = (fingerprint: string, on: boolean) => setSelected((chosen) => (on ? [...chosen, fingerprint] : chosen.filter((item) => item !== fingerprint)))
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
          {
            name: 'assigned',
            label: 'Assigned',
            kind: 'select',
            options: [
              ['', 'to anyone or nobody'],
              ['me', 'to me'],
              ['nobody', 'to nobody'],
            ],
          },
          { name: 'assignee', label: 'Assigned to' },
          { name: 'environment', label: 'Environment' },
          { name: 'release', label: 'Release' },
          { name: 'first_release', label: 'First seen in release' },
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
      <TimeRangeControl range={range} />
      <WithChanges project={project} changes={changes}>
        <ErrorVolume project={project} range={range} markers={changes.markers} />
      </WithChanges>
      {canWrite && <BulkActions project={project} selected={selected} groups={list.items} onDone={() => (setSelected([]), list.reload())} />}
      <PagedTable
        list={list}
        what="error groups"
        emptyText="No error group matches: nothing was captured, or the filters exclude everything."
        rowKey={(group) => group.fingerprint}
        columns={[
          ...(canWrite
            ? [
                {
                  title: 'Select',
                  render: (group: ErrorGroup) => (
                    <input
                      type="checkbox"
                      aria-label={`Select ${group.name}: ${group.message}`}
                      checked={selected.includes(group.fingerprint)}
                      onChange={(event) => toggle(group.fingerprint, event.currentTarget.checked)}
                    />
                  ),
                },
              ]
            : []),
          { title: 'Status', render: (group) => <StatusBadges group={group} /> },
          {
            title: 'Error',
            render: (group) => (
              <Link href={`/p/${project}/errors/${group.fingerprint}`}>
                <strong>{group.name}</strong> <span class="message">{group.message}</span>
              </Link>
            ),
          },
          { title: 'Assignee', render: (group) => group.assignee ?? <span class="muted">—</span> },
          { title: 'Events', numeric: true, render: (group) => group.count.toLocaleString() },
          { title: 'Users', numeric: true, render: (group) => group.usersAffected.toLocaleString() },
          { title: 'Last 14 days', render: (group) => <DaySparkline days={group.countsPerDay} /> },
          { title: 'Last seen', render: (group) => <Time iso={group.lastSeen} /> },
          { title: 'First seen', render: (group) => <Time iso={group.firstSeen} /> },
          { title: 'Environments', render: (group) => group.environments.join(', ') },
        ]}
      />
    </section>
  )
}

export { ErrorGroupPage } from './error-group.tsx'
