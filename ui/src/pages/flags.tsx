import { queryString, usePaged } from '../api.ts'
import { Badge, PagedTable, Time } from '../components.tsx'
import { Link } from '../router.tsx'
import { StateWithHistory } from './state-history.tsx'
import type { components } from '../api-types.generated.ts'

type FlagState = components['schemas']['FlagState']
type FlagChange = components['schemas']['FlagChange']

const Enabled = ({ enabled }: { enabled: boolean | null }) => (enabled === null ? <span class="muted">not said</span> : <Badge value={enabled ? 'on' : 'off'} />)
const Rollout = ({ rollout }: { rollout: number | null }) => <>{rollout === null ? '—' : `${rollout}%`}</>

export function FlagsPage({ project }: { project: string }) {
  const list = usePaged<FlagState>(`/api/flags/flags${queryString({ project_id: project })}`)
  return (
    <section>
      <h1>Feature flags</h1>
      <PagedTable
        list={list}
        what="feature flags"
        emptyText="No feature_flag events yet."
        rowKey={(flag) => flag.key}
        columns={[
          { title: 'Flag', render: (flag) => <Link href={`/p/${project}/flags/${encodeURIComponent(flag.key)}`}>{flag.key}</Link> },
          { title: 'State', render: (flag) => <Enabled enabled={flag.enabled} /> },
          { title: 'Rollout', numeric: true, render: (flag) => <Rollout rollout={flag.rollout} /> },
          { title: 'Changed by', render: (flag) => flag.actor ?? '—' },
          { title: 'Changed', render: (flag) => <Time iso={flag.updatedAt} /> },
          { title: 'Changes', numeric: true, render: (flag) => flag.changes },
        ]}
      />
    </section>
  )
}

export function FlagPage({ project, flag: flagKey }: { project: string; flag: string }) {
  return (
    <StateWithHistory<components['schemas']['FlagStateDetail'], FlagChange>
      path={`/api/flags/flags/${encodeURIComponent(flagKey)}${queryString({ project_id: project })}`}
      back={[`/p/${project}/flags`, 'All flags']}
      what="the flag"
      title={(flag) => flag.key}
      facts={(flag) => (
        <>
          <Enabled enabled={flag.enabled} /> rollout <Rollout rollout={flag.rollout} /> · changed by {flag.actor ?? 'unknown'} <Time iso={flag.updatedAt} />
        </>
      )}
      rowKey={(change) => change.eventId}
      columns={[
        { title: 'When', render: (change) => <Time iso={change.changedAt} /> },
        { title: 'State', render: (change) => <Enabled enabled={change.enabled} /> },
        { title: 'Rollout', numeric: true, render: (change) => <Rollout rollout={change.rollout} /> },
        { title: 'By', render: (change) => change.actor ?? '—' },
      ]}
    />
  )
}
