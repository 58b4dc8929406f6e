import type { TargetedSubmitEvent } from 'preact'
import { useState } from 'preact/hooks'
import { api, queryString, useGet, usePaged } from '../api.ts'
import { Badge, BarChart, ConfirmButton, Json, LoadState, Table, Time, useAction } from '../components.tsx'
import { useCanWrite } from '../identity.ts'
import { Link, navigate, useLocation, withParams } from '../router.tsx'
import { traceLogsHref } from '../components/log-links.tsx'
import { SuspectCommitsPanel } from '../components/commits.tsx'
import { GroupAssignee } from '../components/assignee.tsx'
import { GroupTriage, StatusBadges, StatusConditions } from '../components/triage.tsx'
import type { components } from '../api-types.generated.ts'
import '../components/investigation.css'

type Schemas = components['schemas']
type Occurrence = Schemas['ErrorOccurrence']
type ErrorGroupDetail = Schemas['ErrorGroupDetail']
type Frame = Schemas['StackFrame']
type Breadcrumb = Schemas['Breadcrumb']
type TagFacet = Schemas['ErrorGroupTags']['data'][number]

// Every occurrence a group keeps (the API keeps the latest 100) fits one page.
const OCCURRENCES_PAGE = 100

export function ErrorGroupPage({ project, fingerprint }: { project: string; fingerprint: string }) {
  const canWrite = useCanWrite()
  const detail = useGet<ErrorGroupDetail>(`/api/errors/groups/${fingerprint}`)
  const group = detail.data
  return (
    <section>
      <p>
        <Link href={`/p/${project}/errors`}>← All errors</Link>
      </p>
      <LoadState loading={detail.loading && !group} error={detail.error} what="the error group" />
      {group && (
        <>
          <h1>
            {group.name}: <span class="message">{group.message}</span>
          </h1>
          <p class="facts">
            <StatusBadges group={group} /> <StatusConditions group={group} /> {group.count.toLocaleString()} events · {group.usersAffected.toLocaleString()} {group.usersAffected === 1 ? 'user' : 'users'} affected · first seen <Time iso={group.firstSeen} /> · last seen <Time iso={group.lastSeen} />
            {group.firstRelease && (
              <>
                {' '}
                · first release <Link href={`/p/${project}/deploys${queryString({ release: group.firstRelease, range: '30d' })}`}>{group.firstRelease}</Link>
              </>
            )}
          </p>
          {canWrite && <GroupTriage group={group} onChange={detail.reload} />}
          <GroupAssignee fingerprint={fingerprint} />
          <SuspectCommitsPanel project={project} fingerprint={fingerprint} />
          <Breakdown project={project} group={group} />
          <TagFacets fingerprint={fingerprint} />
          <BarChart title="Events per day, last 14 days (UTC)" bars={group.countsPerDay.map((day) => ({ label: day.date.slice(5), value: day.count }))} />
          <Occurrences project={project} fingerprint={fingerprint} count={group.count} />
          <Grouping project={project} group={group} canWrite={canWrite} onChange={detail.reload} />
        </>
      )}
    </section>
  )
}

/** Occurrences per release, environment and service, most frequent first; a release leads to its deploys and to what it introduced. */
function Breakdown({ project, group }: { project: string; group: ErrorGroupDetail }) {
  const tables: [title: string, rows: ErrorGroupDetail['breakdown']['release'], link?: (value: string) => preact.ComponentChildren][] = [
    [
      'Release',
      group.breakdown.release,
      (release) => (
        <>
          <Link href={`/p/${project}/deploys${queryString({ release, range: '30d' })}`} title={`deploys of ${release}`}>
            {release}
          </Link>{' '}
          <Link class="muted" href={`/p/${project}/errors${queryString({ first_release: release, range: '30d' })}`} title={`errors first seen in ${release}`}>
            (new in it)
          </Link>
        </>
      ),
    ],
    ['Environment', group.breakdown.environment],
    ['Service', group.breakdown.service],
  ]
  return (
    <div class="breakdown" aria-label="Breakdown">
      {tables.map(([title, rows, link]) => {
        const total = rows.reduce((sum, row) => sum + row.count, 0) || 1
        return (
          <table aria-label={`Occurrences per ${title.toLowerCase()}`}>
            <thead>
              <tr>
                <th scope="col">{title}</th>
                <th scope="col" class="num">
                  Events
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={2} class="muted">
                    none named
                  </td>
                </tr>
              )}
              {rows.map((row) => (
                <tr>
                  <td>{link ? link(row.value) : row.value}</td>
                  <td class="num">
                    <span class="share" style={{ width: `${Math.max((row.count / total) * 60, 2)}px` }} />
                    {row.count.toLocaleString()} <span class="muted">({Math.round((row.count / total) * 100)}%)</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      })}
    </div>
  )
}

/** Keys the breakdown above shows already. */
const BREAKDOWN_KEYS = new Set(['release', 'environment', 'service'])

/** Tags as facets: each tag key's most frequent values over every occurrence of the group, with their share. */
function TagFacets({ fingerprint }: { fingerprint: string }) {
  const tags = useGet<Schemas['ErrorGroupTags']>(`/api/errors/groups/${fingerprint}/tags?values=5`)
  const facets = (tags.data?.data ?? []).filter((facet) => !BREAKDOWN_KEYS.has(facet.key))
  return (
    <section aria-label="Tags">
      <h2>Tags</h2>
      <LoadState loading={tags.loading && !tags.data} error={tags.error} what="the tags" />
      {tags.data && facets.length === 0 && <p class="muted">No occurrence named a tag or a user.</p>}
      <div class="breakdown">
        {facets.map((facet) => (
          <TagFacetTable facet={facet} />
        ))}
      </div>
    </section>
  )
}

function TagFacetTable({ facet }: { facet: TagFacet }) {
  const others = facet.count - facet.topValues.reduce((sum, value) => sum + value.count, 0)
  const share = (part: number) => Math.round((part / (facet.count || 1)) * 100)
  return (
    <table aria-label={`Tag ${facet.key}`}>
      <thead>
        <tr>
          <th scope="col">
            {facet.key} <span class="muted">({facet.distinctValues.toLocaleString()})</span>
          </th>
          <th scope="col" class="num">
            Events
          </th>
        </tr>
      </thead>
      <tbody>
        {facet.topValues.map((value) => (
          <tr>
            <td>{value.value}</td>
            <td class="num">
              <span class="share" style={{ width: `${Math.max(share(value.count) * 0.6, 2)}px` }} />
              {value.count.toLocaleString()} <span class="muted">({share(value.count)}%)</span>
            </td>
          </tr>
        ))}
        {others > 0 && (
          <tr>
            <td class="muted">{(facet.distinctValues - facet.topValues.length).toLocaleString()} other values</td>
            <td class="num">
              {others.toLocaleString()} <span class="muted">({share(others)}%)</span>
            </td>
          </tr>
        )}
      </tbody>
    </table>
  )
}

/** What happened before the error, oldest first, each at its time before the occurrence. */
function Breadcrumbs({ breadcrumbs, at }: { breadcrumbs: Breadcrumb[]; at: number }) {
  if (breadcrumbs.length === 0) return <p class="muted">No breadcrumbs were sent with this occurrence.</p>
  const before = (crumb: Breadcrumb) => {
    if (!crumb.timestamp) return ''
    const seconds = (Date.parse(crumb.timestamp) - at) / 1000
    return Math.abs(seconds) < 60 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds / 60)} min`
  }
  return (
    <ol class="breadcrumbs" aria-label="Breadcrumbs">
      {breadcrumbs.map((crumb) => (
        <li class={crumb.level === 'error' || crumb.level === 'fatal' ? 'crumb-error' : undefined}>
          <span class="muted crumb-time" title={crumb.timestamp}>
            {before(crumb)}
          </span>{' '}
          <Badge value={crumb.category ?? crumb.type ?? 'default'} tone="crumb" />
          {crumb.level && crumb.level !== 'info' && <span class="muted"> {crumb.level}</span>} {crumb.message ?? ''}
          {crumb.data && Object.keys(crumb.data).length > 0 && <code class="crumb-data"> {Object.entries(crumb.data).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`).join(' ')}</code>}
        </li>
      ))}
    </ol>
  )
}

/** Any stored occurrence, newest to oldest, kept in the URL (`occurrence=`), with its stack, request and links to its trace. */
function Occurrences({ project, fingerprint, count }: { project: string; fingerprint: string; count: number }) {
  const { params } = useLocation()
  const list = usePaged<Occurrence>(`/api/errors/groups/${fingerprint}/occurrences?limit=${OCCURRENCES_PAGE}`)
  const chosen = params.get('occurrence')
  const index = Math.max(list.items.findIndex((occurrence) => occurrence.id === chosen), 0)
  const occurrence = list.items[index]
  const go = (to: number) => navigate(withParams({ occurrence: list.items[to]?.id }), { replace: true })
  return (
    <>
      <h2>Occurrence</h2>
      <LoadState loading={list.loading && list.items.length === 0} error={list.error} empty={!list.loading && list.items.length === 0} what="occurrences" />
      {occurrence && (
        <>
          <nav class="occurrence-nav" aria-label="Occurrences">
            <button type="button" onClick={() => go(0)} disabled={index === 0}>
              Newest
            </button>
            <button type="button" onClick={() => go(index - 1)} disabled={index === 0}>
              ← Newer
            </button>
            <span role="status">
              {index + 1} of {list.items.length}
              {list.nextCursor ? '+' : ''} stored{count > list.items.length ? ` (of ${count.toLocaleString()} events)` : ''}
            </span>
            <button type="button" onClick={() => go(index + 1)} disabled={index >= list.items.length - 1}>
              Older →
            </button>
            <button type="button" onClick={() => go(list.items.length - 1)} disabled={index >= list.items.length - 1}>
              Oldest
            </button>
          </nav>
          <OccurrenceView project={project} occurrence={occurrence} />
          <h2>Stored occurrences</h2>
          <Table
            items={list.items}
            rowKey={(item) => item.id}
            columns={[
              {
                title: 'When',
                render: (item) => (
                  <Link href={withParams({ occurrence: item.id })} aria-current={item.id === occurrence.id ? 'true' : undefined}>
                    <Time iso={item.timestamp} />
                  </Link>
                ),
              },
              { title: 'Message', render: (item) => item.message },
              { title: 'Release', render: (item) => item.release ?? '—' },
              { title: 'Environment', render: (item) => item.environment ?? '—' },
              { title: 'Service', render: (item) => item.service ?? '—' },
              { title: 'Trace', render: (item) => (item.traceId ? <Link href={`/p/${project}/traces/${encodeURIComponent(item.traceId)}`}>{item.traceId.slice(0, 8)}</Link> : '—') },
            ]}
          />
          {list.nextCursor && (
            <button type="button" class="more" onClick={list.more} disabled={list.loading}>
              Load more occurrences
            </button>
          )}
        </>
      )}
    </>
  )
}

function OccurrenceView({ project, occurrence }: { project: string; occurrence: Occurrence }) {
  const [view, setView] = useState<'raw' | 'frames' | undefined>()
  const shown = view ?? (occurrence.stack ? 'raw' : 'frames')
  // Stored oldest first; shown as the raw text prints them, each the cause of the one above it.
  const causes = Array.isArray(occurrence.metadata.chained) ? [...(occurrence.metadata.chained as ChainedException[])].reverse() : []
  const ts = Date.parse(occurrence.timestamp)
  return (
    <article aria-label="This occurrence">
      <p class="facts">
        <Time iso={occurrence.timestamp} /> (<Time iso={occurrence.timestamp} absolute />) · <code>{occurrence.id}</code>
        {occurrence.release && (
          <>
            {' '}
            · release <Link href={`/p/${project}/deploys${queryString({ release: occurrence.release, range: '30d' })}`}>{occurrence.release}</Link>
          </>
        )}
        {occurrence.environment && <> · {occurrence.environment}</>}
        {occurrence.service && <> · {occurrence.service}</>}
        {occurrence.reportedBy.length > 0 && <> · reported by {occurrence.reportedBy.join(' and ')}</>}
      </p>
      {occurrence.traceId && (
        <p class="signal-links">
          <Link href={`/p/${project}/traces/${encodeURIComponent(occurrence.traceId)}${occurrence.spanId ? `?span=${encodeURIComponent(occurrence.spanId)}` : ''}`}>
            Trace {occurrence.traceId.slice(0, 8)}
            {occurrence.spanId ? `, span ${occurrence.spanId}` : ''}
          </Link>
          <Link href={traceLogsHref(project, occurrence.traceId, new Date(ts - 5 * 60_000).toISOString(), 10 * 60_000)}>Logs of this trace</Link>
        </p>
      )}
      <h3>Stack trace</h3>
      <div class="actions" role="group" aria-label="Stack trace view">
        <button type="button" aria-pressed={shown === 'raw'} onClick={() => setView('raw')} disabled={!occurrence.stack}>
          Raw
        </button>
        <button type="button" aria-pressed={shown === 'frames'} onClick={() => setView('frames')} disabled={!occurrence.frames?.length}>
          Frames
        </button>
      </div>
      {shown === 'raw' && occurrence.stack ? <pre class="stack">{occurrence.stack}</pre> : <Frames frames={occurrence.frames ?? []} />}
      {causes.length > 0 && (
        <section aria-label="Chained exceptions">
          <h3>Chained exceptions</h3>
          <p class="muted">Each caused the one above it (its cause, or the exception being handled when it was raised).</p>
          {causes.map((exception) => (
            <div class="chained">
              <h4>
                Caused by <strong>{exception.type ?? 'Exception'}</strong>: {exception.value ?? ''}
              </h4>
              {/* the raw text prints their frames already */}
              {shown === 'frames' && <Frames frames={exception.frames ?? []} />}
            </div>
          ))}
        </section>
      )}
      <h3>Breadcrumbs</h3>
      <Breadcrumbs breadcrumbs={occurrence.breadcrumbs} at={ts} />
      {occurrence.request && (
        <>
          <h3>Request</h3>
          <Json value={occurrence.request} />
        </>
      )}
      <h3>Metadata</h3>
      {Object.keys(occurrence.metadata).length ? <Json value={occurrence.metadata} /> : <p class="muted">No metadata beyond the known fields.</p>}
    </article>
  )
}

/** An earlier exception of a chain as the Sentry intake stores it in the metadata, its frames as ingest takes them. */
interface ChainedException {
  type?: string
  value?: string
  frames?: Partial<Frame>[]
}

/** A stack's frames, innermost first: a stored occurrence's, or a chained exception's whose missing parts are absent rather than null. */
function Frames({ frames }: { frames: Partial<Frame>[] }) {
  if (frames.length === 0) return <p class="muted">No stack trace was captured.</p>
  return (
    <ol class="frames">
      {frames.map((frame) => (
        <li class={frame.inApp ? 'in-app' : undefined}>
          <code>{frame.function ?? '<anonymous>'}</code>{' '}
          <span class="muted">{[frame.module ?? frame.filename, frame.lineno, frame.colno].filter((part) => part != null).join(':')}</span>
          {frame.inApp && <Badge value="in app" tone="inapp" />}
        </li>
      ))}
    </ol>
  )
}

/** Why occurrences share this group: each fingerprint's components and whether each counted; merge other groups in, or take a fingerprint out. */
function Grouping({ project, group, canWrite, onChange }: { project: string; group: ErrorGroupDetail; canWrite: boolean; onChange(): void }) {
  const [error, run] = useAction()
  const merge = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const text = String(new FormData(event.currentTarget).get('fingerprints') ?? '')
    const fingerprints = text.split(/[\s,]+/).filter(Boolean)
    if (fingerprints.length > 0) void run(() => api('POST', `/api/errors/groups/${group.fingerprint}/merge`, { fingerprints }).then(onChange))
  }
  return (
    <>
      <h2>Why these events are grouped</h2>
      <p class="muted">
        Each fingerprint is the hash of the components marked <span class="counted">counted</span>; occurrences with the same fingerprint share a group.
        {group.grouping.length > 1 && ' This group answers to several fingerprints, merged into it.'}
      </p>
      {group.grouping.map((fingerprint) => (
        <section class="grouping" aria-label={`Fingerprint ${fingerprint.fingerprint.slice(0, 12)}`}>
          <h3>
            <code title={fingerprint.fingerprint}>{fingerprint.fingerprint.slice(0, 12)}</code>{' '}
            <span class="muted">
              {fingerprint.count.toLocaleString()} events · algorithm {fingerprint.algorithm} · last seen <Time iso={fingerprint.lastSeen} />
            </span>
          </h3>
          <ul>
            {fingerprint.components.map((component) => (
              <li>
                <span class={component.contributes ? 'counted' : 'ignored-component'}>{component.contributes ? '✓ counted' : '✗ not counted'}</span> <strong>{component.id}</strong>
                {component.values.length > 0 && (
                  <>
                    : <code>{component.values.slice(0, 12).join(' · ')}</code>
                    {component.values.length > 12 && <span class="muted"> and {component.values.length - 12} more</span>}
                  </>
                )}{' '}
                <span class="muted">— {component.hint}</span>
              </li>
            ))}
          </ul>
          {canWrite && group.grouping.length > 1 && (
            <ConfirmButton
              label={`Unmerge ${fingerprint.fingerprint.slice(0, 12)}`}
              question={`Take fingerprint ${fingerprint.fingerprint.slice(0, 12)} and its ${fingerprint.count} events out into a group of its own?`}
              confirmLabel="Unmerge"
              onConfirm={async () => {
                const answer = await api<{ unmerged: { fingerprint: string }[] }>('POST', `/api/errors/groups/${group.fingerprint}/unmerge`, { fingerprints: [fingerprint.fingerprint] })
                if (fingerprint.fingerprint === group.fingerprint) navigate(`/p/${project}/errors/${answer.unmerged[0].fingerprint}`)
                else onChange()
              }}
            />
          )}
        </section>
      ))}
      {canWrite && (
        <form class="inline" onSubmit={merge}>
          <label>
            <span>Merge groups into this one (their fingerprints)</span>
            <input name="fingerprints" size={50} placeholder="fingerprint, …" />
          </label>
          <button type="submit">Merge</button>
          {error && <span role="alert" class="error">{error}</span>}
          <span class="muted">or select groups on the stream and choose Merge.</span>
        </form>
      )}
    </>
  )
}
