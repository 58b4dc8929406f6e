import { queryString, usePaged } from '../api.ts'
import { Json, LoadState, PagedTable, Time } from '../components.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { useModules } from '../modules.tsx'
import type { components } from '../api-types.generated.ts'

/** A stored event of whichever type: the fields every `<Type>Event` component shares, its payload left open. */
type StoredEvent = Omit<components['schemas']['LogEvent'], 'data'> & { data: Record<string, unknown> }

/** The generic page of any registry event type without a page of its own: its events, newest first, with their payloads. */
export function ModuleEventsPage({ project, type }: { project: string; type: string }) {
  const modules = useModules(project)
  const module = modules?.find((candidate) => candidate.type === type)
  const range = useTimeRange('24h')
  const list = usePaged<StoredEvent>(module ? `${module.basePath}/events${queryString({ project_id: project, from: range.from, to: range.listTo })}` : null)
  return (
    <section>
      <h1>
        <code>{type}</code> events
      </h1>
      {modules && !module && <p class="state error">The portal has no event type “{type}”.</p>}
      <LoadState loading={!modules} what="the event types" />
      {module && (
        <>
          <TimeRangeControl range={range} />
          <PagedTable
            list={list}
            what={`${type} events`}
            emptyText={`No ${type} event yet.`}
            rowKey={(event) => event.id}
            columns={[
              { title: 'When', render: (event) => <Time iso={event.ts} /> },
              { title: 'Payload', render: (event) => <Json value={event.data} /> },
            ]}
          />
        </>
      )}
    </section>
  )
}
