import { absoluteTime, useZone } from './time.tsx'
import { navigate, withContext } from '../router.tsx'
import './investigation.css'

export interface HistogramBucket {
  start: string
  /** counts per series (a level, …), drawn stacked in the order of `series` */
  counts: Record<string, number>
}

export interface Marker {
  ms: number
  label: string
  /** the whole description on hover, when the label is short */
  title?: string
  tone?: string
  /** where a click on the marker leads (the change it marks) */
  href?: string
}

const WIDTH = 720
const HEIGHT = 110
const TOP = 14
const BOTTOM = 18

/**
 * Counts over time as stacked bars in inline SVG (no charting library: the app stays small). Each
 * bar names its time and counts on hover; a click on a bar narrows the range to it; markers (deploys)
 * are drawn as labelled vertical lines.
 */
export function Histogram(props: {
  title: string
  buckets: HistogramBucket[]
  bucketMs: number
  series: string[]
  /** CSS class of each series' bars */
  tone?: (series: string) => string
  markers?: Marker[]
  onSelect?: (fromMs: number, toMs: number) => void
}) {
  const zone = useZone()
  const { buckets, bucketMs, series } = props
  if (buckets.length === 0) return null
  const totals = buckets.map((bucket) => Object.values(bucket.counts).reduce((sum, count) => sum + count, 0))
  const max = Math.max(...totals, 1)
  const firstMs = Date.parse(buckets[0].start)
  const endMs = Date.parse(buckets[buckets.length - 1].start) + bucketMs
  const slot = WIDTH / buckets.length
  const x = (ms: number) => ((ms - firstMs) / (endMs - firstMs)) * WIDTH
  const y = (count: number) => (count / max) * (HEIGHT - TOP - BOTTOM)
  const seriesTotals = series.map((name) => [name, buckets.reduce((sum, bucket) => sum + (bucket.counts[name] ?? 0), 0)] as const)
  return (
    <figure class="chart histogram">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} role="img" aria-label={`${props.title}: ${totals.reduce((a, b) => a + b, 0)} in all`}>
        <text x={2} y={10}>
          {max}
        </text>
        <line x1={0} y1={HEIGHT - BOTTOM} x2={WIDTH} y2={HEIGHT - BOTTOM} class="axis" />
        {buckets.map((bucket, index) => {
          const startMs = Date.parse(bucket.start)
          let base = HEIGHT - BOTTOM
          const label = `${absoluteTime(startMs, zone)}: ${totals[index]}${series.length > 1 ? ` (${series.filter((name) => bucket.counts[name]).map((name) => `${name} ${bucket.counts[name]}`).join(', ')})` : ''}`
          return (
            <g
              class={props.onSelect ? 'bucket selectable' : 'bucket'}
              data-start={bucket.start}
              data-total={totals[index]}
              {...(props.onSelect && {
                tabIndex: 0,
                role: 'button',
                'aria-label': `Zoom to ${label}`,
                onClick: () => props.onSelect!(startMs, startMs + bucketMs),
                onKeyDown: (event: KeyboardEvent) => (event.key === 'Enter' || event.key === ' ') && props.onSelect!(startMs, startMs + bucketMs),
              })}
            >
              <title>{label}</title>
              <rect x={index * slot} y={TOP} width={slot} height={HEIGHT - TOP - BOTTOM} class="hit" />
              {series.map((name) => {
                const height = y(bucket.counts[name] ?? 0)
                if (height === 0) return null
                base -= height
                return <rect x={index * slot + 1} y={base} width={Math.max(slot - 2, 1)} height={Math.max(height, 1)} class={`bar ${props.tone?.(name) ?? ''}`} />
              })}
            </g>
          )
        })}
        <Markers markers={props.markers} fromMs={firstMs} toMs={endMs} x={x} top={TOP} bottom={HEIGHT - BOTTOM} width={WIDTH} />
        <text x={0} y={HEIGHT - 4}>
          {absoluteTime(firstMs, zone)}
        </text>
        <text x={WIDTH} y={HEIGHT - 4} text-anchor="end">
          {absoluteTime(endMs, zone)}
        </text>
      </svg>
      <figcaption>
        {props.title}
        {series.length > 1 &&
          seriesTotals.map(([name, total]) => (
            <span class={`key ${props.tone?.(name) ?? ''}`}>
              {' '}
              {name} {total.toLocaleString()}
            </span>
          ))}
        {props.onSelect && <span class="muted"> · click a bar to zoom in</span>}
      </figcaption>
    </figure>
  )
}

/** Vertical lines at moments of the chart's window, labelled, each a link to what it marks when it has one. */
export function Markers(props: { markers: Marker[] | undefined; fromMs: number; toMs: number; x(ms: number): number; top: number; bottom: number; width: number; labelTop?: number }) {
  const zone = useZone()
  const shown = (props.markers ?? []).filter((marker) => marker.ms >= props.fromMs && marker.ms <= props.toMs)
  return (
    <>
      {shown.map((marker, index) => {
        const at = props.x(marker.ms)
        const description = `${marker.title ?? marker.label} — ${absoluteTime(marker.ms, zone)}`
        const drawn = (
          <>
            <title>{description}</title>
            <line x1={at} y1={props.top - 4} x2={at} y2={props.bottom} />
            <rect x={at - 4} y={props.top - 4} width={8} height={props.bottom - props.top + 4} class="hit" />
            {/* staggered, so that labels of changes close together stay readable */}
            <text x={Math.min(at + 3, props.width - 90)} y={(props.labelTop ?? props.top + 6) + (index % 3) * 12}>
              {marker.label.length > 16 ? `${marker.label.slice(0, 15)}…` : marker.label}
            </text>
          </>
        )
        if (!marker.href) return <g class={`marker ${marker.tone ?? ''}`}>{drawn}</g>
        const href = withContext(marker.href)
        return (
          <a
            class={`marker ${marker.tone ?? ''}`}
            href={href}
            aria-label={description}
            onClick={(event: MouseEvent) => {
              if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
              event.preventDefault()
              navigate(href)
            }}
          >
            {drawn}
          </a>
        )
      })}
    </>
  )
}
