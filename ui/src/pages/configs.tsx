import { queryString, usePaged } from '../api.ts'
import { Filters, PagedTable, Time } from '../components.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { Diff } from '../diff.tsx'
import { Link, useFilters } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

type ConfigEvent = components['schemas']['ConfigEvent']

type ConfigPath = components['schemas']['ConfigPath']

/** Changed configuration paths with their latest diff; `?path=` shows every change of one path, each diff rendered. */
export function ConfigsPage({ project }: { project: string }) {
  const { path, actor } = useFilters(['path', 'actor'])
  // Configuration is long-lived: a month by default, so that paths changed weeks ago still show.
  const range = useTimeRange('30d')
  const filters = { path, actor, from: range.from, to: range.listTo }
  return (
    <section>
      <h1>Configuration changes</h1>
      <Filters fields={[{ name: 'path', label: 'Path' }, { name: 'actor', label: 'Actor' }, ]} />
      <TimeRangeControl range={range} />
      {filters.path ? <PathHistory project={project} filters={filters} /> : <Paths project={project} filters={filters} />}
    </section>
  )
}

function Paths({ project, filters }: { project: string; filters: Record<string, string | undefined> }) {
  const list = usePaged<ConfigPath>(`/api/modules/configs/paths${queryString({ project_id: project, actor: filters.actor, from: filters.from, to: filters.to })}`)
  return (
    <PagedTable
      list={list}
      what="configuration paths"
      emptyText="No config events yet: send one per change, with the path, the actor and the unified diff."
      rowKey={(path) => path.path}
      columns={[
        { title: 'Path', render: (path) => <Link href={`/p/${project}/configs${queryString({ path: path.path })}`}>{path.path}</Link> },
        { title: 'Changes', numeric: true, render: (path) => path.changes },
        { title: 'Last change', render: (path) => <Time iso={path.lastChangedAt} /> },
        { title: 'By', render: (path) => path.lastActor ?? '—' },
        {
          title: 'Latest diff',
          render: (path) => (
            <details>
              <summary>diff</summary>
              <Diff text={path.lastDiff} />
            </details>
          ),
        },
      ]}
    />
  )
}

function PathHistory({ project, filters }: { project: string; filters: Record<string, string | undefined> }) {
  const list = usePaged<ConfigEvent>(`/api/modules/configs/events${queryString({ project_id: project, ...filters })}`)
  return (
    <>
      <p>
        <Link href={`/p/${project}/configs`}>← All paths</Link>
      </p>
      <h2>
        Changes of <code>{filters.path}</code>
      </h2>
      <PagedTable
        list={list}
        what="changes"
        emptyText="No change of this path matches."
        rowKey={(change) => change.id}
        columns={[
          { title: 'When', render: (change) => <Time iso={change.ts} /> },
          { title: 'By', render: (change) => change.data.actor ?? '—' },
          { title: 'Diff', render: (change) => <Diff text={change.data.diff} /> },
        ]}
      />
    </>
  )
}
