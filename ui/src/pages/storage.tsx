import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, useGet } from '../api.ts'
import { LoadState, Table, Time } from '../components.tsx'
import type { components } from '../api-types.generated.ts'

type Retention = components['schemas']['ProjectRetention']

/** Any module's status read: every one carries the storage figures this page shows. */
type ModuleStatus = components['schemas'][Extract<keyof components['schemas'], `${string}ModuleStatus`>]

const SOURCES = { project_module: 'this project, for this type', project: 'this project', install: 'install default' }

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`

/** Per event type: events stored, size on disk (all projects), oldest event and the retention in force. */
export function StoragePage({ project }: { project: string }) {
  const retention = useGet<Retention>(`/api/projects/${encodeURIComponent(project)}/retention`)
  const [statuses, setStatuses] = useState<Record<string, ModuleStatus | undefined>>({})
  const rows = Object.entries(retention.data?.effective ?? {}).map(([type, setting]) => ({ type, ...setting }))
  useEffect(() => {
    let current = true
    for (const row of rows) {
      api<ModuleStatus>('GET', `${row.statusPath}?project_id=${encodeURIComponent(project)}`).then(
        (status) => current && setStatuses((known) => ({ ...known, [row.type]: status })),
        () => {},
      )
    }
    return () => {
      current = false
    }
  }, [retention.data, project])
  const cell = (type: string, show: (status: ModuleStatus) => ComponentChildren) => {
    const status = statuses[type]
    return status ? show(status) : <span class="muted">…</span>
  }
  return (
    <section>
      <h1>Storage</h1>
      <p class="muted">Size on disk counts every project’s rows of the type; events older than the retention are deleted within a day after it.</p>
      <LoadState loading={retention.loading} error={retention.error} what="storage" />
      {retention.data && (
        <Table
          items={rows}
          rowKey={(row) => row.type}
          columns={[
            { title: 'Type', render: (row) => <code>{row.type}</code> },
            { title: 'Events', numeric: true, render: (row) => cell(row.type, (status) => status.events ?? '—') },
            { title: 'Size on disk', numeric: true, render: (row) => cell(row.type, (status) => megabytes(status.sizeBytes)) },
            { title: 'Oldest event', render: (row) => cell(row.type, (status) => <Time iso={status.oldestEventAt} />) },
            { title: 'Kept', numeric: true, render: (row) => `${row.days} days` },
            { title: 'Set by', render: (row) => SOURCES[row.source] },
          ]}
        />
      )}
    </section>
  )
}
