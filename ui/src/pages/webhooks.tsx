import type { TargetedSubmitEvent } from 'preact'
import { useState } from 'preact/hooks'
import { api, queryString, useGet, usePaged, type Page } from '../api.ts'
import { Badge, ConfirmButton, Filters, Json, LoadState, OnceNotice, PagedTable, Table, Time, useAction } from '../components.tsx'
import { useCanWrite } from '../identity.ts'
import { Link, useFilters } from '../router.tsx'
import { bucketSecondsFor, TimeRangeControl, useTimeRange, type TimeRange } from '../components/time.tsx'
import { useChanges, WithChanges } from '../components/changes.tsx'
import { Histogram, type Marker } from '../components/histogram.tsx'
import type { components } from '../api-types.generated.ts'

type Schemas = components['schemas']
type Endpoint = Schemas['Endpoint']
type Delivery = Schemas['Delivery']
type DeliveryDetail = Schemas['DeliveryDetail']
type ReportedDestinations = Schemas['ReportedDestinations']
type EndpointHealth = Schemas['EndpointHealth']

/**
 * Enabled is not healthy: an endpoint whose attempts fail says so, with since when, rather than a green badge.
 * `failingSince` comes from the endpoint itself; the last attempt's outcome from the health read.
 */
function EndpointState({ endpoint, health }: { endpoint: Endpoint; health?: EndpointHealth }) {
  if (!endpoint.enabled) return <Badge value={`disabled (${endpoint.disabledReason ?? 'manual'})`} tone="failed" />
  if (endpoint.failingSince)
    return (
      <span>
        <Badge value="failing" tone="failed" /> since <Time iso={endpoint.failingSince} />
      </span>
    )
  if (!health) return <Badge value="enabled · no recent attempts" tone="pending" />
  return <Badge value="healthy" tone="succeeded" />
}

function successRate(health?: EndpointHealth) {
  if (!health) return <span class="muted">—</span>
  return `${Math.round(health.successRate * 1000) / 10}% of ${health.attempts}`
}

function lastStatus(health?: EndpointHealth) {
  if (!health) return <span class="muted">—</span>
  return (
    <span>
      <Badge value={health.lastStatusCode === null ? health.lastAttemptStatus : `HTTP ${health.lastStatusCode}`} tone={health.lastAttemptStatus === 'succeeded' ? 'succeeded' : 'failed'} /> <Time iso={health.lastAttemptAt} />
    </span>
  )
}


function WebhookTabs({ project, current }: { project: string; current: 'endpoints' | 'deliveries' }) {
  return (
    <nav class="tabs" aria-label="Webhooks">
      <Link href={`/p/${project}/webhooks`} aria-current={current === 'endpoints' ? 'page' : undefined}>
        Endpoints
      </Link>
      <Link href={`/p/${project}/webhooks/deliveries`} aria-current={current === 'deliveries' ? 'page' : undefined}>
        Deliveries
      </Link>
    </nav>
  )
}

export function EndpointsPage({ project }: { project: string }) {
  const canWrite = useCanWrite()
  const list = usePaged<Endpoint>(`/api/webhooks/endpoints${queryString({ project_id: project })}`)
  const health = useGet<{ data: EndpointHealth[] }>(`/api/webhooks/endpoint-health${queryString({ project_id: project })}`)
  const healthOf = new Map(health.data?.data.map((row) => [row.endpointId, row]))
  const [sent, setSent] = useState<string>()
  const [retried, setRetried] = useState<string>()
  const sendTest = (endpoint: Endpoint) =>
    run(async () => {
      const answer = await api<{ deliveries: { id: string }[] }>('POST', '/api/webhooks/deliver', {
        projectId: project,
        eventType: 'webhook.test',
        payload: { message: 'A test event sent from the portal', sentAt: new Date().toISOString() },
        endpointIds: [endpoint.id],
      })
      setSent(answer.deliveries[0]?.id)
      setTimeout(health.reload, 1500)
    })
  const reported = useGet<ReportedDestinations>(`/api/webhooks/reported-attempts${queryString({ project_id: project })}`)
  const [secret, setSecret] = useState<{ title: string; value: string }>()
  const [error, run] = useAction()
  const rotate = (endpoint: Endpoint) =>
    api<Schemas['RotatedEndpointSecret']>('POST', `/api/webhooks/endpoints/${endpoint.id}/rotate`).then((answer) => setSecret({ title: `New secret for ${endpoint.url}`, value: answer.secret }))
  const setEnabled = (endpoint: Endpoint, enabled: boolean) => run(() => api('PATCH', `/api/webhooks/endpoints/${endpoint.id}`, { enabled }).then(list.reload))
  return (
    <section>
      <h1>Webhooks</h1>
      <WebhookTabs project={project} current="endpoints" />
      {canWrite && <NewEndpoint project={project} onCreated={(endpoint) => (setSecret({ title: `Endpoint ${endpoint.url} created`, value: endpoint.secret }), list.reload())} />}
      {secret && <OnceNotice title={secret.title} secrets={[['Signing secret', secret.value]]} onDone={() => setSecret(undefined)} />}
      {error && <p role="alert" class="error">{error}</p>}
      {retried && (
        <p class="state" role="status">
          {retried} <Link href={`/p/${project}/webhooks/deliveries`}>See the deliveries</Link>.
        </p>
      )}
      {sent && (
        <p class="state" role="status">
          Test event sent: <Link href={`/p/${project}/webhooks/deliveries/${sent}`}>follow its delivery</Link>.
        </p>
      )}
      <h2>Endpoints</h2>
      <PagedTable
        list={list}
        what="endpoints"
        emptyText="No endpoints yet."
        rowKey={(endpoint) => endpoint.id}
        columns={[
          { title: 'URL', render: (endpoint) => <code>{endpoint.url}</code> },
          { title: 'Kind', render: (endpoint) => endpoint.kind },
          { title: 'Event types', render: (endpoint) => endpoint.eventTypes.join(', ') || 'all' },
          { title: 'Health', render: (endpoint) => <EndpointState endpoint={endpoint} health={healthOf.get(endpoint.id)} /> },
          { title: 'Success (24 h)', numeric: true, render: (endpoint) => successRate(healthOf.get(endpoint.id)) },
          { title: 'Last status', render: (endpoint) => lastStatus(healthOf.get(endpoint.id)) },
          {
            title: 'Actions',
            render: (endpoint) => (
              <span class="actions">
                <Link href={`/p/${project}/webhooks/deliveries${queryString({ endpoint_id: endpoint.id })}`}>Deliveries</Link>
                {canWrite && (
                  <>
                    {endpoint.enabled && (
                      <button type="button" onClick={() => sendTest(endpoint)}>
                        Send test event
                      </button>
                    )}
                    <ConfirmButton label="Rotate secret" question={`Make a new signing secret for ${endpoint.url}? The old one keeps signing for the grace period.`} confirmLabel="Rotate" onConfirm={() => rotate(endpoint)} />
                    {endpoint.enabled && <RetrySince endpoint={endpoint} onDone={(count) => (setRetried(`${count} ${count === 1 ? 'delivery' : 'deliveries'} of ${endpoint.url} sent now.`), list.reload(), setTimeout(health.reload, 1500))} />}
                    {endpoint.enabled ? (
                      <ConfirmButton
                        label="Disable"
                        question={`Disable ${endpoint.url}?`}
                        confirmLabel="Disable endpoint"
                        onConfirm={() => api('PATCH', `/api/webhooks/endpoints/${endpoint.id}`, { enabled: false }).then(list.reload)}
                      >
                        <p>Nothing is sent to it while it is disabled, and no new event is queued for it. Its pending deliveries wait: they are sent as soon as you enable it again.</p>
                      </ConfirmButton>
                    ) : (
                      <button type="button" onClick={() => setEnabled(endpoint, true)} title="sends the deliveries that waited for it at once">
                        Enable
                      </button>
                    )}
                    <ConfirmButton danger label="Delete" question={`Delete the endpoint ${endpoint.url}? Its pending deliveries fail.`} confirmLabel="Delete endpoint" onConfirm={() => api('DELETE', `/api/webhooks/endpoints/${endpoint.id}`).then(list.reload)} />
                  </>
                )}
              </span>
            ),
          },
        ]}
      />
      <h2>Attempts reported by integrations</h2>
      <LoadState loading={reported.loading && !reported.data} error={reported.error} empty={reported.data?.data.length === 0} emptyText="No webhook events reported." what="reported attempts" />
      {reported.data && reported.data.data.length > 0 && (
        <Table
          items={reported.data.data}
          rowKey={(row) => row.destination}
          columns={[
            { title: 'Destination', render: (row) => row.destination },
            { title: 'Attempts', numeric: true, render: (row) => row.attempts },
            { title: 'Failed', numeric: true, render: (row) => row.failed },
            { title: 'Success rate', numeric: true, render: (row) => `${Math.round(row.successRate * 1000) / 10}%` },
            { title: 'Last status', numeric: true, render: (row) => row.lastStatusCode ?? '—' },
            { title: 'Last attempt', render: (row) => <Time iso={row.lastAttemptAt} /> },
          ]}
        />
      )}
    </section>
  )
}

function NewEndpoint({ project, onCreated }: { project: string; onCreated(endpoint: Endpoint & { secret: string }): void }) {
  const [error, run] = useAction()
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = event.currentTarget
    const fields = new FormData(form)
    const eventTypes = String(fields.get('eventTypes') ?? '')
      .split(',')
      .map((type) => type.trim())
      .filter(Boolean)
    return run(async () => {
      onCreated(await api('POST', '/api/webhooks/endpoints', { projectId: project, url: String(fields.get('url')), kind: String(fields.get('kind')), eventTypes }))
      form.reset()
    })
  }
  return (
    <form class="filters" onSubmit={onSubmit} aria-label="New endpoint">
      <label>
        <span>Endpoint URL</span>
        <input name="url" type="url" required placeholder="https://example.com/hooks" />
      </label>
      <label>
        <span>Kind</span>
        <select name="kind">
          <option value="generic">generic</option>
          <option value="slack">slack</option>
          <option value="discord">discord</option>
        </select>
      </label>
      <label>
        <span>Event types (comma-separated; empty: all)</span>
        <input name="eventTypes" placeholder="error.group.created, deploy.failed" />
      </label>
      <button type="submit">Create endpoint</button>
      {error && <span role="alert" class="error">{error}</span>}
    </form>
  )
}

const DELIVERY_FILTERS = ['status', 'endpoint_id', 'event_type']

export function DeliveriesPage({ project }: { project: string }) {
  const filters = useFilters(DELIVERY_FILTERS)
  const range = useTimeRange('7d')
  const list = usePaged<Delivery>(`/api/webhooks/deliveries${queryString({ project_id: project, ...filters, from: range.from, to: range.listTo })}`)
  const changes = useChanges(project, range, {}, list.answered)
  const canWrite = useCanWrite()
  const [error, run] = useAction()
  // Endpoints by name for the filter, read once the deliveries have answered.
  const endpoints = useGet<Page<Endpoint>>(list.answered ? `/api/webhooks/endpoints${queryString({ project_id: project, limit: 500 })}` : null)
  const endpointOptions: [string, string][] = [['', 'any'], ...(endpoints.data?.data ?? []).map((endpoint): [string, string] => [endpoint.id, endpoint.description ? `${endpoint.description} (${endpoint.url})` : endpoint.url])]
  if (filters.endpoint_id && !endpointOptions.some(([id]) => id === filters.endpoint_id)) endpointOptions.push([filters.endpoint_id, filters.endpoint_id])
  return (
    <section>
      <h1>Webhook deliveries</h1>
      <WebhookTabs project={project} current="deliveries" />
      <Filters
        fields={[
          {
            name: 'status',
            label: 'Status',
            kind: 'select',
            options: [
              ['', 'any'],
              ['pending', 'pending'],
              ['succeeded', 'succeeded'],
              ['failed', 'failed'],
            ],
          },
          { name: 'endpoint_id', label: 'Endpoint', kind: 'select', options: endpointOptions },
          { name: 'event_type', label: 'Event type' },
        ]}
      />
      <TimeRangeControl range={range} />
      <WithChanges project={project} changes={changes}>
        <DeliveryVolume deliveries={list.items} range={range} markers={changes.markers} />
      </WithChanges>
      <PagedTable
        list={list}
        what="deliveries"
        emptyText="No delivery matches."
        rowKey={(delivery) => delivery.id}
        columns={[
          { title: 'Delivery', render: (delivery) => <Link href={`/p/${project}/webhooks/deliveries/${delivery.id}`}>{delivery.eventType}</Link> },
          { title: 'Status', render: (delivery) => <Badge value={delivery.status} /> },
          { title: 'Attempts', numeric: true, render: (delivery) => delivery.attemptCount },
          { title: 'Next attempt', render: (delivery) => <Time iso={delivery.nextAttemptAt} /> },
          { title: 'Last response', render: (delivery) => (delivery.lastStatusCode === null ? <span class="muted">—</span> : `HTTP ${delivery.lastStatusCode}`) },
          { title: 'Endpoint', render: (delivery) => <code title={delivery.endpointId}>{delivery.endpointUrl}</code> },
          { title: 'Created', render: (delivery) => <Time iso={delivery.createdAt} /> },
          ...(canWrite
            ? [
                {
                  title: 'Retry',
                  render: (delivery: Delivery) =>
                    delivery.status === 'succeeded' ? null : (
                      <button type="button" onClick={() => run(() => api('POST', `/api/webhooks/deliveries/${delivery.id}/retry`).then(list.reload))} aria-label={`Retry ${delivery.eventType} to ${delivery.endpointUrl} now`}>
                        Retry now
                      </button>
                    ),
                },
              ]
            : []),
        ]}
      />
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  )
}

export function DeliveryPage({ project, delivery: deliveryId }: { project: string; delivery: string }) {
  const canWrite = useCanWrite()
  const detail = useGet<DeliveryDetail>(`/api/webhooks/deliveries/${deliveryId}`)
  const [error, run] = useAction()
  const delivery = detail.data
  return (
    <section>
      <p>
        <Link href={`/p/${project}/webhooks/deliveries`}>← All deliveries</Link>
      </p>
      <LoadState loading={detail.loading && !delivery} error={detail.error} what="the delivery" />
      {delivery && (
        <>
          <h1>
            {delivery.eventType} <Badge value={delivery.status} />
          </h1>
          <p class="facts">
            <code>{delivery.id}</code> · message <code>{delivery.messageId}</code> · endpoint <code title={delivery.endpointId}>{delivery.endpointUrl}</code> · {delivery.attemptCount} attempts
            {delivery.lastStatusCode !== null && <> · last answer HTTP {delivery.lastStatusCode}</>} · next{' '}
            <Time iso={delivery.nextAttemptAt} />
          </p>
          {canWrite && (
            <p class="actions">
              <button type="button" onClick={() => run(() => api('POST', `/api/webhooks/deliveries/${delivery.id}/retry`).then(detail.reload))}>
                Retry now
              </button>
              {error && <span role="alert" class="error">{error}</span>}
            </p>
          )}
          <h2>Payload</h2>
          <Json value={delivery.payload} />
          <h2>Attempts</h2>
          {delivery.attempts.length === 0 && <p class="state">No attempt yet: the first is due {delivery.nextAttemptAt ? 'shortly' : 'never (the delivery ended)'}.</p>}
          <ol class="attempts">
            {delivery.attempts.map((attempt) => (
              <li>
                <details open={attempt === delivery.attempts[delivery.attempts.length - 1]}>
                  <summary>
                    Attempt {attempt.number} <Badge value={attempt.status} tone={attempt.status === 'succeeded' ? 'succeeded' : 'failed'} /> {attempt.response ? `HTTP ${attempt.response.statusCode}` : (attempt.error ?? '')} ·{' '}
                    {attempt.durationMs} ms · <Time iso={attempt.startedAt} />
                  </summary>
                  <div class="attempt">
                    <h3>Request</h3>
                    <p>
                      <code>
                        {attempt.request.method} {attempt.request.url}
                      </code>{' '}
                      · {attempt.request.bodySize} bytes · signed by <code>{attempt.secretId ?? '—'}</code>
                    </p>
                    <Headers headers={attempt.request.headers} />
                    <h3>Response</h3>
                    {attempt.response ? (
                      <>
                        <p>HTTP {attempt.response.statusCode}</p>
                        <Headers headers={attempt.response.headers} />
                        <pre class="body">{attempt.response.body || '(empty body)'}</pre>
                      </>
                    ) : (
                      <p class="error">No response: {attempt.error ?? 'unknown error'}</p>
                    )}
                  </div>
                </details>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  )
}

function Headers({ headers }: { headers: Record<string, string> }) {
  return (
    <dl class="headers">
      {Object.entries(headers).map(([name, value]) => (
        <>
          <dt>{name}</dt>
          <dd>
            <code>{value}</code>
          </dd>
        </>
      ))}
    </dl>
  )
}

/** The deliveries listed, per status over the range (from the page shown, no other read): a run of failures shows where it began. */
function DeliveryVolume({ deliveries, range, markers }: { deliveries: Delivery[]; range: TimeRange; markers: Marker[] }) {
  const bucketMs = bucketSecondsFor(range.spanMs) * 1000
  const fromMs = Math.floor(Date.parse(range.from) / bucketMs) * bucketMs
  const buckets = Array.from({ length: Math.ceil((Date.parse(range.to) - fromMs) / bucketMs) }, (_, index) => ({ start: new Date(fromMs + index * bucketMs).toISOString(), counts: {} as Record<string, number> }))
  for (const delivery of deliveries) {
    const bucket = buckets[Math.floor((Date.parse(delivery.createdAt) - fromMs) / bucketMs)]
    if (bucket) bucket.counts[delivery.status] = (bucket.counts[delivery.status] ?? 0) + 1
  }
  return <Histogram title={`Deliveries listed (${deliveries.length}) over time, per outcome`} buckets={buckets} bucketMs={bucketMs} series={['failed', 'pending', 'succeeded']} tone={(status) => `delivery-${status}`} markers={markers} />
}

/** `datetime-local` text of a moment in UTC (the form reads it back as UTC). */
const localInput = (ms: number) => new Date(ms).toISOString().slice(0, 16)

/**
 * Sends now every pending or failed delivery of the endpoint made since a time (the API's recover): by default
 * since the minute before it began failing (the field holds whole minutes, and the delivery whose attempt began the
 * failure was made before that attempt, maybe in the minute before), else the last day.
 */
function RetrySince({ endpoint, onDone }: { endpoint: Endpoint; onDone(count: number): void }) {
  const [since, setSince] = useState(localInput(endpoint.failingSince ? Date.parse(endpoint.failingSince) - 60_000 : Date.now() - 86_400_000))
  return (
    <ConfirmButton
      label="Retry deliveries…"
      question={`Send now every pending or failed delivery of ${endpoint.url} made after:`}
      confirmLabel="Send them now"
      onConfirm={async () => {
        const answer = await api<{ deliveries: unknown[] }>('POST', `/api/webhooks/endpoints/${endpoint.id}/recover`, { since: new Date(`${since}:00Z`).toISOString() })
        onDone(answer.deliveries.length)
      }}
    >
      <label class="inline">
        <span>From (UTC)</span>
        <input type="datetime-local" value={since} onInput={(event) => setSince(event.currentTarget.value)} />
      </label>
    </ConfirmButton>
  )
}
