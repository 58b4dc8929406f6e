import type { TargetedSubmitEvent } from 'preact'
import { useState } from 'preact/hooks'
import { api, useGet, usePaged } from '../api.ts'
import { Badge, ConfirmButton, OnceNotice, PagedTable, Time, useAction } from '../components.tsx'
import { useCanWrite } from '../identity.ts'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

export type Project = components['schemas']['Project']
type ApiKey = components['schemas']['ApiKey']
type CreatedKey = components['schemas']['CreatedApiKey']
type KeyScope = ApiKey['scopes'][number]
type ProjectActivity = components['schemas']['ProjectActivity']

const SCOPES: [KeyScope, string][] = [
  ['ingest', 'Signed ingest (POST /api/ingest)'],
  ['otlp', 'OpenTelemetry (OTLP/HTTP)'],
  ['sentry', 'Sentry SDKs'],
]

/** What to paste where: the key and secret, and for OTLP and Sentry keys their ready-made settings. */
function createdKeySettings(created: CreatedKey): [label: string, value: string][] {
  const settings: [string, string][] = [['API key', created.key]]
  if (created.scopes.includes('ingest')) settings.push(['Webhook secret', created.webhookSecret])
  if (created.scopes.includes('otlp')) {
    settings.push(['OpenTelemetry endpoint', `OTEL_EXPORTER_OTLP_ENDPOINT=${created.otlpEndpoint ?? `${location.origin}/api/otlp`}`])
    settings.push(['OpenTelemetry headers', `OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer ${created.key}`])
  }
  if (created.sentryDsn) settings.push(['Sentry DSN', created.sentryDsn])
  return settings
}

/** A one-field form that clears itself after a successful submit. */
function NameForm(props: { label: string; submitLabel: string; initial?: string; onSubmit(name: string): Promise<unknown> }) {
  const [error, run] = useAction()
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = event.currentTarget
    const name = String(new FormData(form).get('name') ?? '').trim()
    return run(async () => {
      await props.onSubmit(name)
      form.reset()
    })
  }
  return (
    <form class="inline" onSubmit={onSubmit}>
      <label>
        <span>{props.label}</span>
        {/* uncontrolled: a re-render while the name is typed (the activity read answering) must not put the old one back */}
        <input name="name" required maxLength={200} defaultValue={props.initial} />
      </label>
      <button type="submit">{props.submitLabel}</button>
      {error && <span role="alert" class="error">{error}</span>}
    </form>
  )
}

export function ProjectsPage() {
  const canWrite = useCanWrite()
  const list = usePaged<Project>('/api/projects')
  const [renaming, setRenaming] = useState<string>()
  // one activity read for the projects shown (`project_id` repeated), after the list: the rows never wait for it
  const shown = list.items.map((project) => project.id)
  const activity = useGet<{ data: ProjectActivity[] }>(shown.length ? `/api/projects/activity?${shown.map((id) => `project_id=${encodeURIComponent(id)}`).join('&')}` : null)
  const activityOf = new Map(activity.data?.data.map((row) => [row.projectId, row]))
  const pending = <span class="muted">…</span>
  return (
    <section>
      <h1>Projects</h1>
      {canWrite && <NameForm label="New project name" submitLabel="Create project" onSubmit={(name) => api('POST', '/api/projects', { name }).then(list.reload)} />}
      <PagedTable
        list={list}
        what="projects"
        emptyText={canWrite ? 'No projects yet: create the first one above.' : 'No projects yet; an admin can create one.'}
        rowKey={(project) => project.id}
        columns={[
          {
            title: 'Project',
            render: (project) =>
              renaming === project.id ? (
                <NameForm
                  label="Name"
                  submitLabel="Save"
                  initial={project.name}
                  onSubmit={(name) => api('PATCH', `/api/projects/${project.id}`, { name }).then(() => (setRenaming(undefined), list.reload()))}
                />
              ) : (
                <Link href={`/p/${project.id}`}>{project.name}</Link>
              ),
          },
          { title: 'Id', render: (project) => <code>{project.id}</code> },
          { title: 'Events (24 h)', numeric: true, render: (project) => (activityOf.has(project.id) ? activityOf.get(project.id)!.eventsLast24h : pending) },
          {
            title: 'Last activity',
            render: (project) => (activityOf.has(project.id) ? <Time iso={activityOf.get(project.id)!.lastEventAt} /> : pending),
          },
          { title: 'Created', render: (project) => <Time iso={project.createdAt} /> },
          {
            title: 'Actions',
            render: (project) => (
              <span class="actions">
                <Link href={`/p/${project.id}/keys`}>API keys</Link>
                {canWrite && (
                  <>
                    <button type="button" onClick={() => setRenaming(renaming === project.id ? undefined : project.id)}>
                      {renaming === project.id ? 'Cancel rename' : 'Rename'}
                    </button>
                    <ConfirmButton
                      danger
                      label="Delete"
                      question={`Delete project “${project.name}”? Its API keys stop working and its reads disappear.`}
                      confirmLabel="Delete project"
                      onConfirm={() => api('DELETE', `/api/projects/${project.id}`).then(list.reload)}
                    />
                  </>
                )}
              </span>
            ),
          },
        ]}
      />
    </section>
  )
}

export function KeysPage({ project }: { project: string }) {
  const canWrite = useCanWrite()
  const list = usePaged<ApiKey>(`/api/projects/${project}/keys`)
  const [created, setCreated] = useState<CreatedKey>()
  const [scopes, setScopes] = useState<KeyScope[]>(['ingest'])
  const toggleScope = (scope: KeyScope, on: boolean) => setScopes((current) => (on ? [...current, scope] : current.filter((s) => s !== scope)))
  const create = async (name: string) => {
    setCreated(await api<CreatedKey>('POST', `/api/projects/${project}/keys`, { name, scopes }))
    list.reload()
  }
  return (
    <section>
      <h1>API keys</h1>
      <p class="muted">
        An API key ingests events for this project; its webhook secret signs each batch (X-Service-Signature). OpenTelemetry and Sentry SDKs cannot sign:
        a key made for them is accepted there on its own, so give those scopes only to keys that need them.
      </p>
      {canWrite && (
        <fieldset class="inline">
          <legend>Scopes of the new key</legend>
          {SCOPES.map(([scope, label]) => (
            <label>
              <input type="checkbox" checked={scopes.includes(scope)} onChange={(event) => toggleScope(scope, event.currentTarget.checked)} /> {label}
            </label>
          ))}
        </fieldset>
      )}
      {canWrite && scopes.length > 0 && <NameForm label="New key name" submitLabel="Create key" onSubmit={create} />}
      {created && <OnceNotice title="Key created" secrets={createdKeySettings(created)} onDone={() => setCreated(undefined)} />}
      <PagedTable
        list={list}
        what="API keys"
        rowKey={(key) => key.id}
        columns={[
          { title: 'Name', render: (key) => key.name },
          { title: 'Prefix', render: (key) => <code>{key.prefix}…</code> },
          { title: 'Scopes', render: (key) => key.scopes.join(', ') },
          { title: 'Created', render: (key) => <Time iso={key.createdAt} /> },
          { title: 'Last used', render: (key) => <Time iso={key.lastUsedAt} /> },
          {
            title: 'State',
            render: (key) =>
              key.revokedAt ? (
                <Badge value="revoked" />
              ) : canWrite ? (
                <ConfirmButton
                  danger
                  label="Revoke"
                  question={`Revoke key “${key.name}” (${key.prefix}…)? Ingest with it is refused from now on.`}
                  confirmLabel="Revoke key"
                  onConfirm={() => api('DELETE', `/api/projects/${project}/keys/${key.id}`).then(list.reload)}
                />
              ) : (
                <Badge value="active" />
              ),
          },
        ]}
      />
    </section>
  )
}
