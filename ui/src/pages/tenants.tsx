import { queryString, usePaged } from '../api.ts'
import { PagedTable, Time } from '../components.tsx'
import { Link } from '../router.tsx'
import { StateWithHistory } from './state-history.tsx'
import type { components } from '../api-types.generated.ts'

type TenantPlan = components['schemas']['TenantPlan']
type PlanChange = components['schemas']['TenantPlanChange']

const Limit = ({ limit }: { limit: number | null }) => <>{limit === null ? 'install default' : `${limit.toLocaleString()} events/s`}</>

export function TenantsPage({ project }: { project: string }) {
  const list = usePaged<TenantPlan>(`/api/tenants/plans${queryString({ project_id: project })}`)
  return (
    <section>
      <h1>Tenants</h1>
      <PagedTable
        list={list}
        what="tenants"
        emptyText="No tenant events yet."
        rowKey={(tenant) => tenant.projectId}
        columns={[
          { title: 'Tenant (project)', render: (tenant) => <Link href={`/p/${project}/tenants/${encodeURIComponent(tenant.projectId)}`}>{tenant.projectId}</Link> },
          { title: 'Plan', render: (tenant) => tenant.plan },
          { title: 'Ingest limit', render: (tenant) => <Limit limit={tenant.ingestLimitPerSecond} /> },
          { title: 'Updated', render: (tenant) => <Time iso={tenant.updatedAt} /> },
          { title: 'Changes', numeric: true, render: (tenant) => tenant.changes },
        ]}
      />
    </section>
  )
}

export function TenantPage({ project, tenant }: { project: string; tenant: string }) {
  return (
    <StateWithHistory<components['schemas']['TenantPlanDetail'], PlanChange>
      path={`/api/tenants/plans/${encodeURIComponent(tenant)}${queryString({ project_id: project })}`}
      back={[`/p/${project}/tenants`, 'All tenants']}
      what="the tenant"
      title={(state) => state.projectId}
      facts={(state) => (
        <>
          plan <strong>{state.plan}</strong> · <Limit limit={state.ingestLimitPerSecond} /> · since <Time iso={state.updatedAt} />
        </>
      )}
      rowKey={(change) => change.eventId}
      columns={[
        { title: 'When', render: (change) => <Time iso={change.changedAt} /> },
        { title: 'Plan', render: (change) => change.plan },
        { title: 'Ingest limit', render: (change) => <Limit limit={change.ingestLimitPerSecond} /> },
      ]}
    />
  )
}
