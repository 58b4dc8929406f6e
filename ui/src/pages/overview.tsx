import { useState } from 'preact/hooks'
import { api, queryString, useGet } from '../api.ts'
import { LoadState, OnceNotice, Table, Time, useAction } from '../components.tsx'
import { useCanWrite } from '../identity.ts'
import { sectionOfType } from '../modules.tsx'
import { Link } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

type ProjectActivity = components['schemas']['ProjectActivity']
type CreatedKey = components['schemas']['CreatedApiKey']

/** The portal writes its own management actions (project created, key created) into `audit`: they are not the project's events. */
export function receivedOwnEvents(activity: ProjectActivity): boolean {
  return Object.keys(activity.types).some((type) => type !== 'audit')
}

/** A project's first page: what arrived lately per event type, or, before anything has, how to send the first events. */
export function OverviewPage({ project }: { project: string }) {
  const read = useGet<{ data: ProjectActivity[] }>(`/api/projects/activity${queryString({ project_id: project })}`)
  const activity = read.data?.data[0]
  return (
    <section>
      <LoadState loading={read.loading && !read.data} error={read.error} what="the project’s activity" />
      {read.data && !activity && <p class="state error">This project does not exist or is not yours.</p>}
      {activity && (receivedOwnEvents(activity) ? <Activity project={project} activity={activity} /> : <Onboarding project={project} />)}
    </section>
  )
}

function Activity({ project, activity }: { project: string; activity: ProjectActivity }) {
  const rows = Object.entries(activity.types)
    .map(([type, counts]) => ({ type, ...counts }))
    .sort((a, b) => (b.lastEventAt ?? '').localeCompare(a.lastEventAt ?? ''))
  return (
    <>
      <h1>Overview</h1>
      <p class="facts">
        {activity.eventsLast24h} events in the last 24 h · last event <Time iso={activity.lastEventAt} />
      </p>
      <div class="scroll">
        <Table
          items={rows}
          rowKey={(row) => row.type}
          columns={[
            { title: 'Event type', render: (row) => <Link href={`/p/${project}/${sectionOfType(row.type)}`}>{row.type}</Link> },
            { title: 'Last 24 h', numeric: true, render: (row) => row.eventsLast24h },
            { title: 'Last event', render: (row) => <Time iso={row.lastEventAt} /> },
          ]}
        />
      </div>
    </>
  )
}

/**
 * Four ways in, each ready to paste: the portal's URL and the project's id are filled in, and an admin can make a key
 * here whose values (key, webhook secret, DSN) replace the placeholders — shown this once, like on the keys page.
 */
function Onboarding({ project }: { project: string }) {
  const canWrite = useCanWrite()
  const [key, setKey] = useState<CreatedKey>()
  const [noticeOpen, setNoticeOpen] = useState(true)
  const [error, run] = useAction()
  const createKey = () =>
    run(async () => setKey(await api<CreatedKey>('POST', `/api/projects/${encodeURIComponent(project)}/keys`, { name: 'first events', scopes: ['ingest', 'otlp', 'sentry'] })))
  const origin = location.origin
  const apiKey = key?.key ?? '<API key>'
  const secret = key?.webhookSecret ?? '<webhook secret>'
  const dsn = key?.sentryDsn ?? '<Sentry DSN of a key with the sentry scope>'
  return (
    <>
      <h1>Send your first events</h1>
      <p>
        Nothing has arrived in this project yet (<code>{project}</code>). Pick the way your services already speak; each snippet has this portal’s address
        {key ? ' and the key just made' : ''} filled in.
      </p>
      {canWrite && !key && (
        <p class="actions">
          <button type="button" onClick={createKey}>
            Create a key for these snippets
          </button>
          <span class="muted">
            (scopes ingest, otlp, sentry; or make one on <Link href={`/p/${project}/keys`}>API keys</Link>)
          </span>
          {error && <span role="alert" class="error">{error}</span>}
        </p>
      )}
      {!canWrite && (
        <p class="muted">
          An admin makes the key these snippets need on <Link href={`/p/${project}/keys`}>API keys</Link>.
        </p>
      )}
      {key && noticeOpen && (
        <OnceNotice
          title="Key created for this project"
          secrets={[['API key', key.key], ['Webhook secret', key.webhookSecret], ...(key.sentryDsn ? ([['Sentry DSN', key.sentryDsn]] as [string, string][]) : [])]}
          onDone={() => setNoticeOpen(false)}
        />
      )}
      <div class="onboarding">
        <Snippet title="Node.js SDK" note="Signed batches, retried and flushed in the background.">
          {`npm install @observability-portal/sdk

import { PortalClient } from '@observability-portal/sdk'

const portal = new PortalClient({
  baseUrl: '${origin}',
  apiKey: '${apiKey}',
  webhookSecret: '${secret}',
})
portal.log({ level: 'info', message: 'hello from my service' })
await portal.close()`}
        </Snippet>
        <Snippet title="curl" note="Captures one error with the key alone (no signature needed).">
          {`curl -X POST '${origin}/api/errors/capture' \\
  -H 'authorization: Bearer ${apiKey}' \\
  -H 'content-type: application/json' \\
  -d '{"name":"Error","message":"my first error","service":"api"}'`}
        </Snippet>
        <Snippet title="OpenTelemetry" note="Any OTLP/HTTP exporter: traces, logs and metrics (key with the otlp scope).">
          {`OTEL_EXPORTER_OTLP_ENDPOINT=${origin}/api/otlp
OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer ${apiKey}
OTEL_SERVICE_NAME=my-service`}
        </Snippet>
        <Snippet title="Sentry SDK" note="Point an existing Sentry SDK here: errors arrive grouped (key with the sentry scope).">
          {`Sentry.init({
  dsn: '${dsn}',
})`}
        </Snippet>
      </div>
      <p class="muted">Events show up on their pages as soon as the portal answers 200; this page turns into the project’s overview.</p>
    </>
  )
}

function Snippet({ title, note, children }: { title: string; note: string; children: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <figure class="snippet">
      <figcaption>
        <strong>{title}</strong> <span class="muted">{note}</span>{' '}
        <button type="button" onClick={() => navigator.clipboard.writeText(children).then(() => setCopied(true))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </figcaption>
      <pre>{children}</pre>
    </figure>
  )
}
