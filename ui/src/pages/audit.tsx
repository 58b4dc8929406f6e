import { queryString, usePaged } from '../api.ts'
import { Filters, Json, PagedTable, Time } from '../components.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { useFilters } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

type AuditEvent = components['schemas']['AuditEvent']

const FILTERS = ['actor', 'action', 'resource']

export function AuditPage({ project }: { project: string }) {
  const filters = useFilters(FILTERS)
  const range = useTimeRange('7d')
  const list = usePaged<AuditEvent>(`/api/modules/audit/events${queryString({ project_id: project, ...filters, from: range.from, to: range.listTo })}`)
  return (
    <section>
      <h1>Audit</h1>
      <p class="muted">Who did what: audit events sent by your services, and this portal’s own management actions.</p>
      <Filters
        fields={[
          { name: 'actor', label: 'Actor' },
          { name: 'action', label: 'Action' },
          { name: 'resource', label: 'Resource' },
        ]}
      />
      <TimeRangeControl range={range} />
      <PagedTable
        list={list}
        what="audit events"
        emptyText="No audit event matches."
        rowKey={(event) => event.id}
        columns={[
          { title: 'When', render: (event) => <Time iso={event.ts} /> },
          { title: 'Actor', render: (event) => event.data.actor },
          { title: 'Action', render: (event) => event.data.action ?? '—' },
          { title: 'Resource', render: (event) => event.data.resource ?? '—' },
          { title: 'Request', render: (event) => (event.data.method ? `${event.data.method} ${event.data.path ?? ''} → ${event.data.statusCode ?? '?'}` : '—') },
          { title: 'Details', render: (event) => (event.data.metadata ? <details><summary>metadata</summary><Json value={event.data.metadata} /></details> : '—') },
        ]}
      />
    </section>
  )
}
