import type { TargetedSubmitEvent } from 'preact'
import { useMemo } from 'preact/hooks'
import { navigate, useLocation, withParams } from '../router.tsx'
import './investigation.css'

/**
 * Time in hand (issue 20, point 2): one range control for every time-based page, kept in the URL as
 * `range=<preset>` or `from`/`to` (ISO 8601 UTC, the API's own parameters), and one time zone for the
 * whole app (`tz=utc`, else the browser's own), shown and switchable.
 */

export const PRESETS = { '15m': 15 * 60_000, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const
export type Preset = keyof typeof PRESETS
const PRESET_LABELS: Record<Preset, string> = { '15m': '15 m', '1h': '1 h', '24h': '24 h', '7d': '7 d', '30d': '30 d' }

const TZ_KEY = 'portal.timeZone'

export type Zone = 'utc' | 'local'

/** The zone times are shown in: the URL's `tz`, else the last one chosen on this browser, else local. */
export function useZone(): Zone {
  const { params } = useLocation()
  const chosen = params.get('tz') ?? localStorage.getItem(TZ_KEY)
  return chosen === 'utc' ? 'utc' : 'local'
}

const localZoneName = () => Intl.DateTimeFormat().resolvedOptions().timeZone

export function zoneLabel(zone: Zone): string {
  return zone === 'utc' ? 'UTC' : `local (${localZoneName()})`
}

// One formatter per zone, made when first used: Chromium takes 0.5–2 ms to make one and 5 µs to use it, and a
// page of 50 rows (or a histogram of 56 bars) formats a time each, which made a page's first rows wait 30–100 ms.
const formatters = new Map<Zone, Intl.DateTimeFormat>()
function formatterOf(zone: Zone): Intl.DateTimeFormat {
  let formatter = formatters.get(zone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone === 'utc' ? 'UTC' : undefined,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    })
    formatters.set(zone, formatter)
  }
  return formatter
}

/** `2026-11-23 21:55:16 UTC`: unambiguous, sortable, in the chosen zone. */
export function absoluteTime(ms: number, zone: Zone): string {
  const parts = Object.fromEntries(
    formatterOf(zone)
      .formatToParts(ms)
      .map((part) => [part.type, part.value]),
  )
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${zone === 'utc' ? 'UTC' : parts.timeZoneName}`
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
]
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' })

/** `5 min ago`, `in 2 days`: the largest unit that fits. */
export function relativeTime(ms: number, now = Date.now()): string {
  const delta = ms - now
  for (const [unit, size] of UNITS) if (Math.abs(delta) >= size || unit === 'second') return relative.format(Math.round(delta / size), unit)
  return ''
}

/** A moment as a relative time, the absolute one (in the chosen zone) on hover and for screen readers' `dateTime`. */
export function Time({ iso, absolute }: { iso: string | null | undefined; absolute?: boolean }) {
  const zone = useZone()
  if (!iso) return <span class="muted">—</span>
  const ms = Date.parse(iso)
  const exact = absoluteTime(ms, zone)
  return (
    <time dateTime={iso} title={exact}>
      {absolute ? exact : relativeTime(ms)}
    </time>
  )
}

export interface TimeRange {
  /** ISO 8601: where the range starts */
  from: string
  /** ISO 8601: where it ends (now, for a preset) */
  to: string
  /** `to` to send to a list read: none for a preset, so that what arrives after the page opened still shows */
  listTo: string | undefined
  preset: Preset | undefined
  spanMs: number
}

/**
 * The range of the current URL: `from`/`to` when given (custom), else the `range` preset, else the
 * page's default. A preset is resolved once per URL, so that reads do not chase the clock.
 */
export function useTimeRange(defaultPreset: Preset = '24h'): TimeRange {
  const { params } = useLocation()
  const key = ['range', 'from', 'to'].map((name) => params.get(name) ?? '').join('|')
  return useMemo(() => {
    const now = Date.now()
    const from = params.get('from')
    const to = params.get('to')
    if (from || to) {
      const toMs = to ? Date.parse(to) : now
      const fromMs = from ? Date.parse(from) : toMs - PRESETS[defaultPreset]
      return { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), listTo: to ?? undefined, preset: undefined, spanMs: toMs - fromMs }
    }
    const named = params.get('range')
    const preset = named && named in PRESETS ? (named as Preset) : defaultPreset
    return { from: new Date(now - PRESETS[preset]).toISOString(), to: new Date(now).toISOString(), listTo: undefined, preset, spanMs: PRESETS[preset] }
  }, [key, defaultPreset])
}

/** `datetime-local` text of a moment, in the chosen zone. */
function inputValue(iso: string, zone: Zone): string {
  const ms = Date.parse(iso)
  const offset = zone === 'utc' ? 0 : new Date(ms).getTimezoneOffset() * 60_000
  return new Date(ms - offset).toISOString().slice(0, 16)
}

/** A `datetime-local` value read in the chosen zone, as ISO 8601 UTC. */
function fromInput(value: string, zone: Zone): string | undefined {
  if (!value) return undefined
  const ms = zone === 'utc' ? Date.parse(`${value}Z`) : new Date(value).getTime()
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

/** The range control: presets, a custom range, and the time zone times are shown and entered in. */
export function TimeRangeControl({ range }: { range: TimeRange }) {
  const zone = useZone()
  const { params } = useLocation()
  const custom = range.preset === undefined || params.get('custom') === '1'
  const choose = (preset: Preset) => navigate(withParams({ range: preset, from: undefined, to: undefined, custom: undefined }))
  const applyCustom = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    navigate(withParams({ range: undefined, custom: undefined, from: fromInput(String(form.get('rangeFrom')), zone), to: fromInput(String(form.get('rangeTo')), zone) }))
  }
  const fromMs = Date.parse(range.from)
  const toMs = Date.parse(range.to)
  // A range never ends in the future: what is not there yet cannot be shown.
  const show = (startMs: number, endMs: number) => {
    const end = Math.min(endMs, Date.now())
    navigate(withParams({ range: undefined, custom: undefined, from: new Date(Math.max(startMs, 0)).toISOString(), to: new Date(end).toISOString() }))
  }
  const move = (direction: -1 | 1) => show(fromMs + direction * range.spanMs, toMs + direction * range.spanMs)
  const zoomOut = () => {
    const end = Math.min(toMs + range.spanMs / 2, Date.now())
    show(end - 2 * range.spanMs, end)
  }
  const canGoLater = toMs < Date.now() - 1000 && !(range.preset && !params.get('to'))
  const switchZone = () => {
    const next = zone === 'utc' ? 'local' : 'utc'
    localStorage.setItem(TZ_KEY, next)
    navigate(withParams({ tz: next === 'utc' ? 'utc' : 'local' }), { replace: true })
  }
  return (
    <div class="time-range" role="group" aria-label="Time range">
      <div class="presets">
        {(Object.keys(PRESETS) as Preset[]).map((preset) => (
          <button type="button" aria-pressed={range.preset === preset && !custom} onClick={() => choose(preset)} title={`the last ${PRESET_LABELS[preset]}`}>
            {PRESET_LABELS[preset]}
          </button>
        ))}
        <button type="button" aria-pressed={custom} onClick={() => navigate(withParams({ custom: '1' }), { replace: true })}>
          Custom
        </button>
      </div>
      {custom && (
        <form class="custom-range" onSubmit={applyCustom} key={`${range.from}${zone}`}>
          <label>
            <span>From</span>
            <input type="datetime-local" name="rangeFrom" defaultValue={inputValue(range.from, zone)} />
          </label>
          <label>
            <span>To</span>
            <input type="datetime-local" name="rangeTo" defaultValue={inputValue(range.to, zone)} />
          </label>
          <button type="submit">Apply range</button>
        </form>
      )}
      <div class="range-moves" role="group" aria-label="Move the range">
        <button type="button" onClick={() => move(-1)} title="the same span, just before this one">
          ← Earlier
        </button>
        <button type="button" onClick={zoomOut} title="twice the span, around the same middle">
          Zoom out
        </button>
        <button type="button" onClick={() => move(1)} disabled={!canGoLater} title="the same span, just after this one">
          Later →
        </button>
      </div>
      <span class="range-shown" aria-live="polite">
        <Time iso={range.from} absolute /> → {range.preset && !params.get('to') ? 'now' : <Time iso={range.to} absolute />}
      </span>
      <button type="button" class="zone" onClick={switchZone} aria-label={`Time zone: ${zoneLabel(zone)}; switch to ${zone === 'utc' ? 'local' : 'UTC'}`}>
        🕓 {zoneLabel(zone)}
      </button>
    </div>
  )
}

/**
 * A bucket size that draws the range in at most about 60 bars, from a minute to a day; for a day or more,
 * whole hours, which the portal answers from its hourly counts instead of reading a day of events.
 */
export function bucketSecondsFor(spanMs: number): number {
  const sizes = [60, 300, 900, 1800, 3600, 10_800, 21_600, 43_200, 86_400, 604_800]
  const fitting = sizes.filter((size) => spanMs / (size * 1000) <= 60)
  return (spanMs >= 86_400_000 ? fitting.find((size) => size % 3600 === 0) : fitting[0]) ?? 2_592_000
}
