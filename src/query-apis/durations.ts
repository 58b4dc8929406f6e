/** Durations, byte sizes and times as the Loki, Tempo and Prometheus query APIs write them. */

const DURATION_UNITS_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_536_000_000,
}

/** `1h30m`, `5m`, `1.5s`, `300ms` (Prometheus' and Go's duration grammars together), in milliseconds; undefined when it is not one. */
export function parseDurationMs(text: string): number | undefined {
  const trimmed = text.trim()
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w|y))+$/.test(trimmed)) return undefined
  let total = 0
  for (const [, amount, , unit] of trimmed.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h|d|w|y)/g)) total += Number(amount) * DURATION_UNITS_MS[unit]
  return total
}

const BYTE_UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, pb: 1e15, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4, pib: 1024 ** 5 }

/** `20KB`, `1.5MiB`, `512B`: in bytes (KB = 1000, KiB = 1024), undefined when it is not a size. */
export function parseBytes(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(text.trim())
  if (!match) return undefined
  const unit = BYTE_UNITS[(match[2] || 'b').toLowerCase()]
  return unit === undefined ? undefined : Number(match[1]) * unit
}

/** A step or interval: float seconds (`15`, `0.5`) or a duration (`15s`), in milliseconds. */
export function parseStepMs(text: string): number | undefined {
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text.trim())) return Number(text) * 1000
  return parseDurationMs(text)
}

/**
 * A time as Loki's API takes it: float seconds when it has a dot, integer seconds up to ten digits,
 * integer nanoseconds beyond, else RFC 3339. In milliseconds (fractional below one); undefined when unreadable.
 */
export function parseLokiTimeMs(text: string): number | undefined {
  if (text.includes('.') && /^\d+\.\d*$/.test(text)) return Number(text) * 1000
  if (/^-?\d+$/.test(text)) return text.length <= 10 ? Number(text) * 1000 : Number(BigInt(text) / 1000n) / 1000
  return rfc3339Ms(text)
}

/** A time as Prometheus' API takes it: float seconds, or RFC 3339; in milliseconds. */
export function parsePrometheusTimeMs(text: string): number | undefined {
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text) * 1000
  return rfc3339Ms(text)
}

function rfc3339Ms(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? undefined : ms
}

/** Milliseconds as the nanosecond string Loki's streams carry. */
export function nanosString(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString()
}
