import { absoluteTime, useZone } from './time.tsx'
import './investigation.css'

export interface HistogramBucket {
  start: string
  /** counts per series (a level, …), drawn stacked in the order of `series` */
  counts: Record<string, number>
}

export interface Marker {
  ms: number
  label: string
  tone?: string
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
        {props.markers
          ?.filter((marker) => marker.ms >= firstMs && marker.ms < endMs)
          .map((marker) => (
            <g class={`marker ${marker.tone ?? ''}`}>
              <title>{`${marker.label} at ${absoluteTime(marker.ms, zone)}`}</title>
              <line x1={x(marker.ms)} y1={TOP - 4} x2={x(marker.ms)} y2={HEIGHT - BOTTOM} />
              <text x={Math.min(x(marker.ms) + 3, WIDTH - 60)} y={TOP + 6}>
                {marker.label}
              </text>
            </g>
          ))}
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
