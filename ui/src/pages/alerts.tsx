import type { TargetedSubmitEvent } from 'preact'
import { useState } from 'preact/hooks'
import { api, queryString, useGet, usePaged } from '../api.ts'
import { Badge, ConfirmButton, LoadState, PagedTable, Table, Time, useAction } from '../components.tsx'
import { useCanWrite } from '../identity.ts'
import { Link, navigate } from '../router.tsx'
import type { components } from '../api-types.generated.ts'

type Schemas = components['schemas']
type Rule = Schemas['AlertRule']
type Signal = Schemas['AlertSignal']
type Transition = Schemas['AlertTransition']
type Instance = Schemas['AlertInstance']
type Backtest = Schemas['AlertBacktest']
type Endpoint = Schemas['Endpoint']
type Definition = Schemas['AlertRuleDefinition']

const STATE_TONE: Record<string, string> = { ok: 'succeeded', resolved: 'succeeded', pending: 'pending', firing: 'failed', error: 'failed' }
const State = ({ state }: { state: string }) => <Badge value={state} tone={STATE_TONE[state]} />

function HistoryTable({ project, rule }: { project: string; rule?: string }) {
  const history = usePaged<Transition>(`/api/alerts/history${queryString({ project_id: project, rule_id: rule })}`)
  return (
    <PagedTable
      list={history}
      what="transitions"
      emptyText="No transition yet: every rule is ok."
      rowKey={(row) => row.id}
      columns={[
        { title: 'When', render: (row) => <Time iso={row.at} /> },
        ...(rule ? [] : [{ title: 'Rule', render: (row: Transition) => <Link href={`/p/${project}/alerts/${row.ruleId}`}>{row.ruleName}</Link> }]),
        { title: 'Series', render: (row) => row.series || '—' },
        { title: 'Change', render: (row) => <span><State state={row.from} /> → <State state={row.to} /></span> },
        { title: 'Value', numeric: true, render: (row) => (row.value === null ? 'no data' : round(row.value)) },
        { title: 'Threshold', numeric: true, render: (row) => (row.threshold === null ? '—' : row.threshold) },
        { title: 'Window', render: (row) => <span><Time iso={row.windowFrom} /> – <Time iso={row.windowTo} /></span> },
        { title: 'Notified', render: (row) => (row.silenceId ? <Badge value="silenced" tone="pending" /> : row.messageId ? <code>{row.messageId}</code> : '—') },
        { title: 'Detail', render: (row) => row.detail ?? '' },
      ]}
    />
  )
}

const round = (value: number) => Math.round(value * 1000) / 1000

export function AlertsPage({ project }: { project: string }) {
  const canWrite = useCanWrite()
  const rules = usePaged<Rule>(`/api/alerts/rules${queryString({ project_id: project })}`)
  const [editing, setEditing] = useState(false)
  return (
    <section>
      <h1>Alerts</h1>
      <h2>Rules</h2>
      <PagedTable
        list={rules}
        what="alert rules"
        emptyText="No alert rule yet."
        rowKey={(rule) => rule.id}
        columns={[
          { title: 'Rule', render: (rule) => <Link href={`/p/${project}/alerts/${rule.id}`}>{rule.name}</Link> },
          { title: 'Signal', render: (rule) => <code>{rule.signal}</code> },
          { title: 'State', render: (rule) => <span><State state={rule.state} />{rule.firing > 1 ? ` ${rule.firing} series` : ''}{rule.enabled ? '' : ' (disabled)'}</span> },
          { title: 'Condition', render: (rule) => `${rule.aggregate} ${rule.condition.op} ${rule.condition.critical} over ${rule.windowSeconds / 60} min` },
          { title: 'Targets', render: (rule) => (rule.brokenTargets.length ? <Badge value={`${rule.brokenTargets.length} broken`} tone="failed" /> : rule.targets.endpointIds.length) },
        ]}
      />
      {canWrite && !editing && <button onClick={() => setEditing(true)}>New rule</button>}
      {editing && <RuleEditor project={project} onSaved={(rule) => navigate(`/p/${project}/alerts/${rule.id}`)} />}
      <h2>History</h2>
      <HistoryTable project={project} />
    </section>
  )
}

export function AlertRulePage({ project, rule: id }: { project: string; rule: string }) {
  const canWrite = useCanWrite()
  const rule = useGet<Rule>(`/api/alerts/rules/${encodeURIComponent(id)}`)
  const instances = useGet<{ data: Instance[] }>(`/api/alerts/rules/${encodeURIComponent(id)}/instances`)
  const [error, run] = useAction()
  if (!rule.data) return <section><h1>Alert rule</h1><LoadState loading={rule.loading} error={rule.error} what="the rule" /></section>
  return (
    <section>
      <h1>{rule.data.name}</h1>
      <p>
        <State state={rule.data.state} /> <code>{rule.data.signal}</code> {rule.data.description}{' '}
        <span class="muted">{rule.data.lastEvaluatedAt ? <>last evaluated <Time iso={rule.data.lastEvaluatedAt} /></> : 'not evaluated yet'}</span>
      </p>
      {rule.data.brokenTargets.length > 0 && <p role="alert" class="error">Broken targets (deleted endpoints): {rule.data.brokenTargets.join(', ')}</p>}
      <h2>Instances</h2>
      <Table
        items={instances.data?.data ?? []}
        rowKey={(instance) => instance.series}
        columns={[
          { title: 'Series', render: (instance) => instance.series || '—' },
          { title: 'State', render: (instance) => <State state={instance.state} /> },
          { title: 'Severity', render: (instance) => instance.severity ?? '—' },
          { title: 'Value', numeric: true, render: (instance) => (instance.value === null ? 'no data' : round(instance.value)) },
          { title: 'Since', render: (instance) => <Time iso={instance.since} /> },
        ]}
      />
      {canWrite && (
        <p>
          <button onClick={() => run(() => api('POST', `/api/alerts/rules/${id}/evaluate`).then(() => setTimeout(instances.reload, 1500)))}>Evaluate now</button>{' '}
          <ConfirmButton label="Delete rule" question="Delete this rule? Its history stays." confirmLabel="Delete" danger onConfirm={() => run(() => api('DELETE', `/api/alerts/rules/${id}`).then(() => navigate(`/p/${project}/alerts`)))} />
        </p>
      )}
      {error && <p role="alert" class="error">{error}</p>}
      <h2>{canWrite ? 'Edit' : 'Definition'}</h2>
      <RuleEditor project={project} rule={rule.data} readOnly={!canWrite} onSaved={() => rule.reload()} />
      <h2>History</h2>
      <HistoryTable project={project} rule={id} />
    </section>
  )
}

/** The form of a rule, with its preview: the series over the last 24 h or 7 d with the thresholds drawn, and how often it would have fired. */
function RuleEditor({ project, rule, readOnly = false, onSaved }: { project: string; rule?: Rule; readOnly?: boolean; onSaved(rule: Rule): void }) {
  const signals = useGet<{ data: Signal[] }>('/api/alerts/signals')
  const endpoints = useGet<{ data: Endpoint[] }>(`/api/webhooks/endpoints${queryString({ project_id: project, limit: 500 })}`)
  const [signalName, setSignalName] = useState(rule?.signal ?? 'logs.count')
  const [preview, setPreview] = useState<Backtest>()
  const [error, run] = useAction()
  const signal = signals.data?.data.find((s) => s.name === signalName)

  const definitionOf = (form: HTMLFormElement): Definition => {
    const fields = new FormData(form)
    const text = (name: string) => String(fields.get(name) ?? '').trim()
    const number = (name: string) => (text(name) === '' ? undefined : Number(text(name)))
    const filters = Object.fromEntries(
      text('filters')
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1).trim()]),
    )
    return {
      name: text('name'),
      description: text('description'),
      signal: signalName,
      filters,
      aggregate: text('aggregate') || undefined,
      by: text('by') || null,
      windowSeconds: Number(text('window')) * 60,
      condition: { op: text('op') as 'above' | 'below', compareTo: text('compareTo') as 'value' | 'day_before' | 'week_before', critical: Number(text('critical')), warning: number('warning'), resolve: number('resolve') },
      intervalSeconds: Number(text('interval')),
      pendingSeconds: Number(text('pending')),
      noData: text('noData') as 'ok' | 'alerting' | 'keep',
      targets: { endpointIds: fields.getAll('target').map(String), repeatIntervalSeconds: number('repeat') ?? null, sendResolved: fields.get('sendResolved') === 'on' },
      enabled: fields.get('enabled') === 'on',
    }
  }
  const onPreview = (form: HTMLFormElement, range: '24h' | '7d') => run(async () => setPreview(await api<Backtest>('POST', '/api/alerts/preview', { projectId: project, rule: definitionOf(form), range })))
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const definition = definitionOf(event.currentTarget)
    run(async () => onSaved(rule ? await api<Rule>('PUT', `/api/alerts/rules/${rule.id}`, definition) : await api<Rule>('POST', '/api/alerts/rules', { projectId: project, ...definition })))
  }
  return (
    <form class="rule-editor" onSubmit={onSubmit} aria-label={rule ? 'Edit rule' : 'New rule'}>
      <fieldset disabled={readOnly}>
        <label><span>Name</span><input name="name" required value={rule?.name} /></label>
        <label><span>Description</span><input name="description" value={rule?.description} /></label>
        <label>
          <span>Signal</span>
          <select name="signal" value={signalName} onChange={(event) => setSignalName(event.currentTarget.value)}>
            {signals.data?.data.map((s) => <option value={s.name}>{s.name}</option>)}
          </select>
        </label>
        {signal && <p class="muted">{signal.description}</p>}
        <label>
          <span>Filters (name=value per line{signal ? `: ${Object.keys(signal.filters).join(', ')}` : ''})</span>
          <textarea name="filters" rows={3}>{Object.entries(rule?.filters ?? {}).map(([name, value]) => `${name}=${value}`).join('\n')}</textarea>
        </label>
        <label>
          <span>Aggregate</span>
          <select name="aggregate" value={rule?.aggregate}>{signal?.aggregates.map((a) => <option>{a}</option>)}</select>
        </label>
        <label>
          <span>By</span>
          <select name="by" value={rule?.by ?? ''}><option value="">(one series)</option>{Object.keys(signal?.dimensions ?? {}).map((d) => <option>{d}</option>)}</select>
        </label>
        <label><span>Window (minutes)</span><input name="window" type="number" min={1} max={1440} required value={rule ? rule.windowSeconds / 60 : 5} /></label>
        <label>
          <span>Condition</span>
          <select name="op" value={rule?.condition.op ?? 'above'}><option value="above">above</option><option value="below">below</option></select>
        </label>
        <label>
          <span>Compared as</span>
          <select name="compareTo" value={rule?.condition.compareTo ?? 'value'}>
            <option value="value">the value</option>
            <option value="day_before">% change vs a day before</option>
            <option value="week_before">% change vs a week before</option>
          </select>
        </label>
        <label><span>Critical</span><input name="critical" type="number" step="any" required value={rule?.condition.critical} /></label>
        <label><span>Warning</span><input name="warning" type="number" step="any" value={rule?.condition.warning} /></label>
        <label><span>Resolve at</span><input name="resolve" type="number" step="any" value={rule?.condition.resolve} /></label>
        <label><span>Interval (s)</span><input name="interval" type="number" min={10} required value={rule?.intervalSeconds ?? 60} /></label>
        <label><span>Pending (s)</span><input name="pending" type="number" min={0} required value={rule?.pendingSeconds ?? 0} /></label>
        <label>
          <span>No data</span>
          <select name="noData" value={rule?.noData ?? 'ok'}><option>ok</option><option>alerting</option><option>keep</option></select>
        </label>
        <fieldset>
          <legend>Notify</legend>
          {endpoints.data?.data.map((endpoint) => (
            <label><input type="checkbox" name="target" value={endpoint.id} checked={rule?.targets.endpointIds.includes(endpoint.id)} /> {endpoint.url} ({endpoint.kind})</label>
          ))}
          <label><span>Repeat while firing (s)</span><input name="repeat" type="number" min={60} value={rule?.targets.repeatIntervalSeconds ?? undefined} /></label>
          <label><input type="checkbox" name="sendResolved" checked={rule?.targets.sendResolved ?? true} /> also when resolved</label>
        </fieldset>
        <label><input type="checkbox" name="enabled" checked={rule?.enabled ?? true} /> enabled</label>
        <p>
          <button type="button" onClick={(event) => onPreview(event.currentTarget.form!, '24h')}>Preview 24 h</button>{' '}
          <button type="button" onClick={(event) => onPreview(event.currentTarget.form!, '7d')}>Preview 7 days</button>{' '}
          {!readOnly && <button type="submit">{rule ? 'Save' : 'Create rule'}</button>}
        </p>
      </fieldset>
      {error && <p role="alert" class="error">{error}</p>}
      {preview && <PreviewChart preview={preview} />}
    </form>
  )
}

/** The preview's series with the critical, warning and resolve thresholds drawn across it. */
function PreviewChart({ preview }: { preview: Backtest }) {
  const [width, height] = [640, 200]
  const values = preview.series.flatMap((line) => line.points.map((point) => point.value ?? 0))
  const thresholds = [
    ['critical', preview.thresholds.critical],
    ['warning', preview.thresholds.warning],
    ['resolve', preview.thresholds.resolve],
  ].filter((entry): entry is [string, number] => entry[1] !== null)
  const maxY = Math.max(...values, ...thresholds.map(([, value]) => value), 1) * 1.1
  const from = Date.parse(preview.from)
  const to = Date.parse(preview.to)
  const x = (iso: string) => 40 + ((Date.parse(iso) - from) / (to - from || 1)) * (width - 50)
  const y = (value: number) => height - 20 - (value / maxY) * (height - 30)
  return (
    <figure class="chart">
      <p class="preview-firings">
        Would have fired <strong>{preview.firings}</strong> time{preview.firings === 1 ? '' : 's'} (evaluated every {preview.stepSeconds} s)
      </p>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label="Preview with thresholds">
        <text x={2} y={14}>{round(maxY)}</text>
        <line x1={40} y1={height - 20} x2={width - 10} y2={height - 20} class="axis" />
        {thresholds.map(([name, value]) => (
          <g class={`threshold ${name}`}>
            <line x1={40} x2={width - 10} y1={y(value)} y2={y(value)} stroke-dasharray="4 3" stroke={name === 'critical' ? '#c0392b' : name === 'warning' ? '#d68910' : '#27ae60'} />
            <text x={width - 12} y={y(value) - 3} text-anchor="end">{`${name} ${value}`}</text>
          </g>
        ))}
        {preview.series.map((line, index) => (
          <polyline class={`line line${index}`} points={line.points.filter((point) => point.value !== null).map((point) => `${x(point.at)},${y(point.value!)}`).join(' ')} />
        ))}
        <text x={40} y={height - 4}>{new Date(from).toLocaleString()}</text>
        <text x={width - 10} y={height - 4} text-anchor="end">{new Date(to).toLocaleString()}</text>
      </svg>
      <figcaption>{preview.series.map((line, index) => <span class={`key line${index}`}>{line.series || 'value'} </span>)}</figcaption>
    </figure>
  )
}
