/** Label sets and sample values as Prometheus writes them, which Loki's and Prometheus' answers share. */

export type Labels = Record<string, string>

const byName = ([a]: [string, string], [b]: [string, string]) => (a < b ? -1 : a > b ? 1 : 0)

/** A label set's identity: its sorted (name, value) pairs. */
export function labelsKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(byName))
}

/** Prometheus' order of label sets: by their sorted (name, value) pairs. */
export function compareLabels(a: Labels, b: Labels): number {
  const left = Object.entries(a).sort(byName)
  const right = Object.entries(b).sort(byName)
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    if (left[i][0] !== right[i][0]) return left[i][0] < right[i][0] ? -1 : 1
    if (left[i][1] !== right[i][1]) return left[i][1] < right[i][1] ? -1 : 1
  }
  return left.length - right.length
}

/** A float as Prometheus writes a sample (Go's 'f', -1): no exponent; NaN and ±Inf by name. */
export function formatSample(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf'
  const text = String(value)
  return text.includes('e') ? value.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 }) : text
}
