import type { ComponentChildren } from 'preact'
import { queryString, useGet } from '../api.ts'
import { Link } from '../router.tsx'
import { sectionOfType } from '../modules.tsx'
import type { components } from '../api-types.generated.ts'
import type { Marker } from './histogram.tsx'
import { Time } from './time.tsx'
import type { TimeRange } from './time.tsx'
import './investigation.css'

export type Change = components['schemas']['Change']
type ChangeList = components['schemas']['ChangeList']

/** The page that shows a change: its release's deploys, its configuration path, its flag, its alert rule; else its type's events. */
export function changeHref(project: string, change: Change): string {
  if (change.kind === 'alert') return `/p/${project}/alerts/${encodeURIComponent(change.subject)}`
  const base = `/p/${project}/${sectionOfType(change.eventType)}`
  if (change.kind === 'deploy') return `${base}${queryString({ service: change.service, release: change.subject })}`
  if (change.kind === 'config') return `${base}${queryString({ path: change.subject })}`
  if (change.kind === 'flag') return `${base}/${encodeURIComponent(change.subject)}`
  return base
}

const DAY_MS = 86_400_000
const SHOWN_BEFORE = 3

export interface Changes {
  list: Change[]
  /** the newest few of the day before the window: what changed just before what the chart shows */
  before: Change[]
  truncated: boolean
  markers: Marker[]
  loading: boolean
}

/**
 * What changed in the range (deploys, configuration, flags: every source `GET /api/changes` has), for the
 * markers of a page's chart and the panel beside it. Read once the page's list has answered (`readWhen`).
 */
export function useChanges(project: string, range: TimeRange, scope: { service?: string; environment?: string } = {}, readWhen = true): Changes {
  const answer = useGet<ChangeList>(readWhen ? `/api/changes${queryString({ project_id: project, from: range.from, to: range.to, ...scope })}` : null)
  const fromMs = Date.parse(range.from)
  const earlier = useGet<ChangeList>(
    readWhen && range.from ? `/api/changes${queryString({ project_id: project, from: new Date(fromMs - DAY_MS).toISOString(), to: range.from, limit: SHOWN_BEFORE, ...scope })}` : null,
  )
  const list = answer.data?.data ?? []
  return {
    list,
    before: earlier.data?.data ?? [],
    truncated: answer.data?.truncated ?? false,
    loading: answer.loading || !answer.data,
    // an alert's subject is its rule's id: the title names the rule
    markers: list.map((change) => ({ ms: Date.parse(change.ts), label: change.kind === 'alert' ? change.title : change.subject, title: change.title, tone: `change-${change.kind}`, href: changeHref(project, change) })),
  }
}

/** A chart with the changes of its window listed beside it (below it on a narrow screen). */
export function WithChanges({ project, changes, children }: { project: string; changes: Changes; children: ComponentChildren }) {
  return (
    <div class="with-changes">
      <div class="chart-side">{children}</div>
      <ChangesPanel project={project} changes={changes} />
    </div>
  )
}

export function ChangesPanel({ project, changes }: { project: string; changes: Changes }) {
  return (
    <aside class="changes" aria-label="Changes in this window">
      <h2>Changes in this window</h2>
      {changes.loading ? (
        <p class="muted">Loading …</p>
      ) : changes.list.length === 0 ? (
        <p class="muted">No deploy, configuration or flag change in this window.</p>
      ) : (
        <ChangeItems project={project} changes={changes.list} />
      )}
      {changes.truncated && <p class="muted">Only the newest are listed: narrow the range to see the others.</p>}
      {changes.before.length > 0 && (
        <>
          <h3>Just before it</h3>
          <ChangeItems project={project} changes={changes.before} />
        </>
      )}
    </aside>
  )
}

function ChangeItems({ project, changes }: { project: string; changes: Change[] }) {
  return (
    <ol>
      {changes.map((change) => (
        <li class={`change change-${change.kind}`}>
          <span class="kind">{change.kind}</span> <Link href={changeHref(project, change)}>{change.title}</Link> <Time iso={change.ts} />
        </li>
      ))}
    </ol>
  )
}
