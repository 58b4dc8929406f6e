import type { TargetedSubmitEvent } from 'preact'
import { queryString, useGet, usePaged } from '../api.ts'
import { Badge, Filters, Json, PagedTable, Time, useInterval } from '../components.tsx'
import { TimeRangeControl, useTimeRange } from '../components/time.tsx'
import { useChanges, WithChanges } from '../components/changes.tsx'
import { LogVolume, LogTraceLinks, TraceFilterChip } from '../components/log-links.tsx'
import { Link, navigate, useFilters, useLocation, withParams } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

type LogEvent = components['schemas']['LogEvent']
type LevelCounts = components['schemas']['LogLevelCounts']

const REFRESH_MS = 5000
const FIELD_PREFIX = 'field.'

export function LogsPage({ project }: { project: string }) {
  const { params } = useLocation()
  const live = params.get('live') === '1'
  const fieldFilters = [...params.entries()].filter(([name]) => name.startsWith(FIELD_PREFIX))
  const { q, level, module, trace_id, service } = useFilters(['q', 'level', 'module', 'trace_id', 'service'])
  const range = useTimeRange('24h')
  const scope = { module, from: range.from, to: range.listTo }
  const filters = { ...scope, q, level, trace_id, service, ...Object.fromEntries(fieldFilters) }
  const list = usePaged<LogEvent>(`/api/modules/logs/events${queryString({ project_id: project, ...filters })}`)
  // The counts and the histogram are read once the logs have answered: the first rows do not wait behind them.
  const levels = useGet<LevelCounts>(list.answered ? `/api/modules/logs/levels${queryString({ project_id: project, ...scope })}` : null)
  useInterval(live, REFRESH_MS, list.reload)
  const changes = useChanges(project, range, { service }, list.answered)

  return (
    <section>
      <h1>Logs</h1>
      <Filters
        fields={[
          { name: 'q', label: 'Search text' },
          { name: 'level', label: 'Level' },
          { name: 'module', label: 'Module' },
          { name: 'service', label: 'Service' },
        ]}
      />
      <TimeRangeControl range={range} />
      <FieldFilter active={fieldFilters} />
      {trace_id && <TraceFilterChip project={project} traceId={trace_id} />}
      <WithChanges project={project} changes={changes}>
        <LogVolume project={project} range={range} module={module} markers={changes.markers} readWhen={list.answered} />
      </WithChanges>
      {levels.data && levels.data.total > 0 && (
        <p class="levels" aria-label="Logs per level">
          {levels.data.data.map((row) => (
            <Link href={withParams({ level: row.level ?? undefined })} class="chip">
              {row.level ?? 'no level'} <strong>{row.count.toLocaleString()}</strong>
            </Link>
          ))}
        </p>
      )}
      <label class="toggle">
        <input type="checkbox" checked={live} onChange={(event) => navigate(withParams({ live: event.currentTarget.checked ? '1' : undefined }), { replace: true })} />
        Auto-refresh every {REFRESH_MS / 1000} s {live && <span role="status">(live: newest first)</span>}
      </label>
      <PagedTable
        list={list}
        what="logs"
        emptyText="No log matches these filters."
        rowKey={(log) => log.id}
        stackOnPhone
        columns={[
          { title: 'Time', render: (log) => <Time iso={log.ts} /> },
          { title: 'Level', render: (log) => (log.data.level ? <Badge value={log.data.level} tone={`level-${log.data.level.toLowerCase()}`} /> : '—') },
          { title: 'Module', render: (log) => log.data.module ?? '—' },
          { title: 'Message', render: (log) => <LogMessage log={log} /> },
          { title: 'Links', render: (log) => <LogTraceLinks project={project} log={log} /> },
        ]}
      />
    </section>
  )
}

function LogMessage({ log }: { log: LogEvent }) {
  const fields = log.data.fields ?? {}
  if (Object.keys(fields).length === 0) return <span class="logline">{log.data.message}</span>
  return (
    <details>
      <summary class="logline">{log.data.message}</summary>
      <Json value={fields} />
    </details>
  )
}

/** `field.<name>=value` narrows to logs whose `fields.<name>` equals the value. */
function FieldFilter({ active }: { active: [string, string][] }) {
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const name = String(form.get('fieldName') ?? '').trim()
    if (name) navigate(withParams({ [`${FIELD_PREFIX}${name}`]: String(form.get('fieldValue') ?? '') }))
  }
  return (
    <form class="filters" onSubmit={onSubmit} aria-label="Field filters">
      <label>
        <span>Field</span>
        <input name="fieldName" placeholder="userId" pattern="[A-Za-z0-9_.\-]+" />
      </label>
      <label>
        <span>equals</span>
        <input name="fieldValue" />
      </label>
      <button type="submit">Add field filter</button>
      {active.map(([name, value]) => (
        <button type="button" class="chip" onClick={() => navigate(withParams({ [name]: undefined }))} aria-label={`Remove filter ${name.slice(FIELD_PREFIX.length)} = ${value}`}>
          {name.slice(FIELD_PREFIX.length)} = {value} ✕
        </button>
      ))}
    </form>
  )
}
