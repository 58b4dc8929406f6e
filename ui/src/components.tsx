import type { ComponentChildren, TargetedSubmitEvent } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { ApiError, Paged } from './api.ts'
import { navigate, withContext, withParams, useLocation } from './router.tsx'
import { absoluteTime, useZone } from './components/time.tsx'
import { Markers, type Marker } from './components/histogram.tsx'

/** Loading, failure and emptiness said in words, announced to screen readers. */
export function LoadState(props: { loading: boolean; error?: ApiError; empty?: boolean; emptyText?: string; what: string }) {
  if (props.error) {
    return (
      <p class="state error" role="alert">
        Could not load {props.what}: {props.error.detail} <span class="code">({props.error.code})</span>
      </p>
    )
  }
  if (props.loading) return <p class="state loading" role="status">Loading {props.what}…</p>
  if (props.empty) return <p class="state" role="status">{props.emptyText ?? `No ${props.what} yet.`}</p>
  return null
}

export interface Column<T> {
  title: string
  render(item: T): ComponentChildren
  numeric?: boolean
}

/** A table over a cursor-paged list, with its states and a button for the next page. */
export function PagedTable<T>(props: { list: Paged<T, any>; columns: Column<T>[]; what: string; emptyText?: string; rowKey(item: T): string; stackOnPhone?: boolean }) {
  const { list } = props
  const firstLoad = list.loading && list.items.length === 0
  const nothingYet = list.items.length === 0 && !list.error
  // A text or field search looks through a window of events per page: an empty page may still have more to search.
  const searching = nothingYet && list.nextCursor !== null
  return (
    <div class="paged">
      <LoadState loading={firstLoad} error={list.error} empty={!list.loading && nothingYet && !searching} emptyText={props.emptyText} what={props.what} />
      {searching && !list.loading && <p class="state" role="status">No {props.what} among the newest events searched so far.</p>}
      {list.items.length > 0 && <Table columns={props.columns} items={list.items} rowKey={props.rowKey} stackOnPhone={props.stackOnPhone} />}
      {list.nextCursor && (
        <button type="button" class="more" onClick={list.more} disabled={list.loading}>
          {list.loading ? 'Loading…' : searching ? 'Search further' : `Load more ${props.what}`}
        </button>
      )}
    </div>
  )
}

/**
 * Rows as a table; it scrolls inside its box, so a narrow screen never scrolls the page sideways. With
 * `stackOnPhone`, a phone shows each row as a card of labelled lines instead, so that a long cell (a log's
 * message) gets the screen's width rather than a squeezed column.
 */
export function Table<T>(props: { columns: Column<T>[]; items: T[]; rowKey(item: T): string; stackOnPhone?: boolean }) {
  return (
    <div class="scroll">
    <table class={props.stackOnPhone ? 'stack' : undefined}>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th scope="col" class={column.numeric ? 'num' : undefined}>
              {column.title}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.items.map((item) => (
          <tr key={props.rowKey(item)}>
            {props.columns.map((column) => (
              <td class={column.numeric ? 'num' : undefined} data-label={column.title}>{column.render(item)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  )
}

export interface FilterField {
  /** the URL and API query parameter */
  name: string
  label: string
  kind?: 'text' | 'select'
  options?: [value: string, label: string][]
  placeholder?: string
}

/** Filters written into the URL's query on submit; the page reads them back from there. */
export function Filters(props: { fields: FilterField[]; children?: ComponentChildren }) {
  const { params } = useLocation()
  const onSubmit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const updates: Record<string, string | undefined> = {}
    for (const field of props.fields) {
      const value = String(form.get(field.name) ?? '').trim()
      updates[field.name] = value
    }
    navigate(withParams(updates))
  }
  return (
    <form class="filters" role="search" onSubmit={onSubmit} key={params.toString()}>
      {props.fields.map((field) => (
        <label>
          <span>{field.label}</span>
          <FilterInput field={field} value={params.get(field.name) ?? ''} />
        </label>
      ))}
      {props.children}
      <button type="submit">Apply</button>
    </form>
  )
}

// Uncontrolled: the URL sets where a field starts (the form is remounted when it changes), and a
// re-render while the page loads must not put back a value the user has just changed.
function FilterInput({ field, value }: { field: FilterField; value: string }) {
  if (field.kind === 'select') {
    return (
      <select name={field.name}>
        {field.options!.map(([option, label]) => (
          <option value={option} selected={option === value}>
            {label}
          </option>
        ))}
      </select>
    )
  }
  return <input type="search" name={field.name} defaultValue={value} placeholder={field.placeholder} />
}

// Relative, with the absolute time (in the chosen zone) on hover: one Time for the whole app.
export { Time } from './components/time.tsx'

export function Badge({ value, tone }: { value: string; tone?: string }) {
  return <span class={`badge ${tone ?? value}`}>{value}</span>
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>
}

/** A credential shown this once, with a copy button; the portal keeps only its hash. */
function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    await navigator.clipboard.writeText(value)
    setCopied(true)
  }
  return (
    <div class="secret">
      <span>{label}</span>
      <code data-secret>{value}</code>
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  )
}

/** Shown after a create or rotate: the values cannot be read again, so they stay until dismissed. */
export function OnceNotice(props: { title: string; secrets: [label: string, value: string][]; onDone(): void }) {
  return (
    <section class="notice" aria-live="polite">
      <h3>{props.title}</h3>
      <p>Copy these now: the portal shows them this once and keeps only a hash or an encrypted copy.</p>
      {props.secrets.map(([label, value]) => (
        <SecretOnce label={label} value={value} />
      ))}
      <button type="button" onClick={props.onDone}>
        I have copied them
      </button>
    </section>
  )
}

/** A button that asks first, in a modal dialog (focus is trapped and Escape cancels). */
export function ConfirmButton(props: { label: string; question: string; confirmLabel: string; onConfirm(): Promise<void> | void; danger?: boolean; children?: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [error, setError] = useState<string>()
  const confirm = async () => {
    try {
      await props.onConfirm()
      dialog.current?.close()
    } catch (failure) {
      setError((failure as Error).message)
    }
  }
  return (
    <>
      <button type="button" class={props.danger ? 'danger' : undefined} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-label={props.question}>
        <p>{props.question}</p>
        {props.children}
        {error && <p role="alert" class="error">{error}</p>}
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" class={props.danger ? 'danger' : undefined} onClick={confirm}>
            {props.confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  )
}

/** Runs an action, keeping its failure to show next to the control. */
export function useAction(): [error: string | undefined, run: (action: () => Promise<unknown>) => Promise<void>] {
  const [error, setError] = useState<string>()
  const run = async (action: () => Promise<unknown>) => {
    setError(undefined)
    try {
      await action()
    } catch (failure) {
      setError((failure as Error).message)
    }
  }
  return [error, run]
}

/** Calls `tick` every `ms` while `on`. */
export function useInterval(on: boolean, ms: number, tick: () => void) {
  useEffect(() => {
    if (!on) return
    const timer = setInterval(tick, ms)
    return () => clearInterval(timer)
  }, [on, ms, tick])
}

interface Bar {
  label: string
  value: number
}

/** Bars with their values written out, so the chart reads without hovering. */
export function BarChart({ bars, title, format = String, changesPer }: { bars: Bar[]; title: string; format?: (value: number) => string; changesPer?: (label: string) => number }) {
  const max = Math.max(...bars.map((bar) => bar.value), 0) || 1
  const height = 120
  // Each bar's slot is wide enough for its longest label, so that values never overlap.
  const slot = Math.max(44, ...bars.map((bar) => Math.max(format(bar.value).length, bar.label.length) * 7 + 12))
  const width = Math.max(bars.length * slot, 200)
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height + 44}`} width={width} height={height + 44} role="img" aria-label={title}>
        {bars.map((bar, index) => {
          const barHeight = (bar.value / max) * height
          const middle = index * slot + slot / 2
          return (
            <g>
              <title>{`${bar.label}: ${format(bar.value)}`}</title>
              <rect x={middle - 16} y={height - barHeight + 20} width={32} height={Math.max(barHeight, 1)} class="bar" />
              <text x={middle} y={height - barHeight + 15} text-anchor="middle" class="value">
                {format(bar.value)}
              </text>
              <text x={middle} y={height + 38} text-anchor="middle">
                {bar.label}
              </text>
              {changesPer && changesPer(bar.label) > 0 && (
                <text x={middle} y={12} text-anchor="middle" class="changes-count">
                  {`◆ ${changesPer(bar.label)} change${changesPer(bar.label) === 1 ? '' : 's'}`}
                </text>
              )}
            </g>
          )
        })}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
  )
}

export interface Series {
  name: string
  points: { x: number; y: number }[]
}

/**
 * Lines over time (x in epoch ms), with the range of each axis written out, over the window `fromMs`–`toMs`
 * when given (else the points' own). Markers (changes) are drawn over it; with `onSelect`, each point is a
 * button that leads from the moment it stands for (its bucket) to what explains it.
 */
export function LineChart(props: {
  series: Series[]
  title: string
  unit?: string
  fromMs?: number
  toMs?: number
  markers?: Marker[]
  onSelect?: { label(x: number): string; select(x: number): void }
}) {
  const { series, title, unit } = props
  const zone = useZone()
  const points = series.flatMap((line) => line.points)
  if (points.length === 0) return null
  // the band above the plot holds the markers' labels, so that they never cover a point
  const [width, height, plotTop] = [640, 210, 46]
  const minX = Math.min(props.fromMs ?? Infinity, ...points.map((point) => point.x))
  const maxX = Math.max(props.toMs ?? -Infinity, ...points.map((point) => point.x))
  const maxY = Math.max(...points.map((point) => point.y)) || 1
  const x = (value: number) => 40 + ((value - minX) / (maxX - minX || 1)) * (width - 50)
  const y = (value: number) => height - 20 - (value / maxY) * (height - 20 - plotTop)
  const moments = [...new Set(points.map((point) => point.x))].sort((a, b) => a - b)
  const highest = (moment: number) => Math.max(...points.filter((point) => point.x === moment).map((point) => point.y))
  return (
    <figure class="chart line-chart">
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={title}>
        <text x={2} y={plotTop + 4}>{`${maxY}${unit ? ` ${unit}` : ''}`}</text>
        <text x={2} y={height - 22}>0</text>
        <line x1={40} y1={height - 20} x2={width - 10} y2={height - 20} class="axis" />
        {series.map((line, index) => (
          <polyline class={`line line${index}`} points={line.points.map((point) => `${x(point.x)},${y(point.y)}`).join(' ')} />
        ))}
        <Markers markers={props.markers} fromMs={minX} toMs={maxX} x={x} top={plotTop} bottom={height - 20} width={width} labelTop={10} />
        {props.onSelect &&
          moments.map((moment) => (
            <g
              class="point selectable"
              tabIndex={0}
              role="button"
              data-x={new Date(moment).toISOString()}
              aria-label={props.onSelect!.label(moment)}
              onClick={() => props.onSelect!.select(moment)}
              onKeyDown={(event: KeyboardEvent) => (event.key === 'Enter' || event.key === ' ') && props.onSelect!.select(moment)}
            >
              <title>{props.onSelect!.label(moment)}</title>
              <circle cx={x(moment)} cy={y(highest(moment))} r={9} class="hit" />
              <circle cx={x(moment)} cy={y(highest(moment))} r={3} class="dot" />
            </g>
          ))}
        <text x={40} y={height - 4}>{absoluteTime(minX, zone)}</text>
        <text x={width - 10} y={height - 4} text-anchor="end">
          {absoluteTime(maxX, zone)}
        </text>
      </svg>
      <figcaption>
        {title}:{' '}
        {series.map((line, index) => (
          <span class={`key line${index}`}>{line.name} </span>
        ))}
        {props.onSelect && <span class="muted"> · click a point for its traces</span>}
      </figcaption>
    </figure>
  )
}

/** Moments with a value each (a trace's duration at its start) over the window, with markers; a dot links where `href` says. */
export function ScatterChart(props: { title: string; fromMs: number; toMs: number; unit: string; dots: { x: number; y: number; label: string; href: string }[]; markers?: Marker[] }) {
  const zone = useZone()
  if (props.dots.length === 0) return null
  const [width, height, plotTop] = [640, 190, 46]
  const maxY = Math.max(...props.dots.map((dot) => dot.y)) || 1
  const x = (value: number) => 40 + ((value - props.fromMs) / (props.toMs - props.fromMs || 1)) * (width - 50)
  const y = (value: number) => height - 20 - (value / maxY) * (height - 20 - plotTop)
  return (
    <figure class="chart scatter">
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={props.title}>
        <text x={2} y={plotTop + 4}>{`${maxY} ${props.unit}`}</text>
        <line x1={40} y1={height - 20} x2={width - 10} y2={height - 20} class="axis" />
        <Markers markers={props.markers} fromMs={props.fromMs} toMs={props.toMs} x={x} top={plotTop} bottom={height - 20} width={width} labelTop={10} />
        {props.dots.map((dot) => (
          // the list below links each trace for the keyboard and screen readers; the dots are for the pointer
          <a href={withContext(dot.href)} class="dot-link" aria-hidden="true" tabIndex={-1} onClick={(event: MouseEvent) => { if (event.button === 0 && !event.metaKey && !event.ctrlKey) { event.preventDefault(); navigate(withContext(dot.href)) } }}>
            <title>{dot.label}</title>
            <circle cx={x(dot.x)} cy={y(dot.y)} r={3.5} class="dot" />
          </a>
        ))}
        <text x={40} y={height - 4}>{absoluteTime(props.fromMs, zone)}</text>
        <text x={width - 10} y={height - 4} text-anchor="end">
          {absoluteTime(props.toMs, zone)}
        </text>
      </svg>
      <figcaption>{props.title}</figcaption>
    </figure>
  )
}
