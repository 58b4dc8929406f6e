import { queryString, useGet } from '../api.ts'
import { Filters, LoadState, Table } from '../components.tsx'
import { Link, useFilters } from '../router.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import type { components } from '../api-types.generated.ts'

type ReleaseHealth = components['schemas']['ReleaseHealth']

/** A rate as a percentage, to two decimals as Sentry shows crash-free rates; a dash without sessions. */
export function percent(rate: number | null | undefined): string {
  return rate === null || rate === undefined ? '—' : `${(Math.floor(rate * 10_000) / 100).toFixed(2)} %`
}

/** Release health over the window, keyed by release and environment, for the deploy view's column. */
export function useReleaseHealth(project: string, from: string, to: string | undefined) {
  const health = useGet<{ data: ReleaseHealth[] }>(`/api/modules/sessions/releases${queryString({ project_id: project, from, to })}`)
  return new Map((health.data?.data ?? []).map((row) => [`${row.release}\u0000${row.environment ?? ''}`, row]))
}

/** Release health: crash-free sessions and users, and adoption, per release and environment, from Sentry SDKs' sessions. */
export function ReleasesPage({ project }: { project: string }) {
  const { environment, release } = useFilters(['environment', 'release'])
  const range = useTimeRange('24h')
  const health = useGet<{ data: ReleaseHealth[] }>(`/api/modules/sessions/releases${queryString({ project_id: project, environment, release, from: range.from, to: range.listTo })}`)
  const rows = health.data?.data ?? []
  return (
    <section>
      <h1>Releases</h1>
      <p class="muted">Crash-free sessions and users of each release, from the sessions Sentry SDKs send (release health); adoption is the release’s share of its environment.</p>
      <Filters
        fields={[
          { name: 'environment', label: 'Environment' },
          { name: 'release', label: 'Release' },
        ]}
      />
      <TimeRangeControl range={range} />
      <LoadState loading={health.loading && !health.data} error={health.error} empty={!!health.data && rows.length === 0} what="sessions in this range" />
      {rows.length > 0 && (
        <Table
          items={rows}
          rowKey={(row) => `${row.release}\u0000${row.environment ?? ''}`}
          columns={[
            { title: 'Release', render: (row) => <Link href={`/p/${project}/deploys${queryString({ release: row.release, range: '30d' })}`}>{row.release}</Link> },
            { title: 'Environment', render: (row) => row.environment ?? '—' },
            { title: 'Crash-free sessions', numeric: true, render: (row) => percent(row.crashFreeSessions) },
            { title: 'Crash-free users', numeric: true, render: (row) => percent(row.crashFreeUsers) },
            { title: 'Sessions', numeric: true, render: (row) => row.sessions.toLocaleString() },
            { title: 'Crashed', numeric: true, render: (row) => row.crashedSessions.toLocaleString() },
            { title: 'Users', numeric: true, render: (row) => row.users.toLocaleString() },
            { title: 'Adoption (sessions)', numeric: true, render: (row) => percent(row.sessionAdoption) },
            { title: 'Errors', render: (row) => <Link href={`/p/${project}/errors${queryString({ release: row.release, environment: row.environment ?? undefined })}`}>in {row.release}</Link> },
          ]}
        />
      )}
    </section>
  )
}
