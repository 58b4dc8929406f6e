/**
 * Field readers that take both OTLP encodings: protobuf as decoded by protobufjs (ids as bytes,
 * 64-bit integers as Long, unset fields null) and OTLP/JSON (ids as hex, 64-bit integers as strings
 * or numbers, unset fields absent).
 */

/** An AnyValue, KeyValue and the shapes around them, in either encoding. */
export interface AnyValue {
  stringValue?: string | null
  boolValue?: boolean | null
  intValue?: unknown
  doubleValue?: number | null
  arrayValue?: { values?: AnyValue[] | null } | null
  kvlistValue?: { values?: KeyValue[] | null } | null
  bytesValue?: Uint8Array | string | null
}

export interface KeyValue {
  key?: string | null
  value?: AnyValue | null
}

export interface Resource {
  attributes?: KeyValue[] | null
}

export interface Scope {
  name?: string | null
  version?: string | null
}

/** A 64-bit integer (Long from protobuf, string or number from JSON) as a JavaScript number. */
export function int64(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined
  if (typeof value === 'number') return value
  if (typeof value === 'string') return value === '' ? undefined : Number(value)
  if (typeof value === 'object' && typeof (value as { toNumber?: unknown }).toNumber === 'function') return (value as { toNumber(): number }).toNumber()
  return undefined
}

/** Nanoseconds since the epoch as milliseconds; undefined for 0 or absent (OTLP's "not set"). */
export function nanosToMs(value: unknown): number | undefined {
  const nanos = int64(value)
  return nanos === undefined || nanos === 0 || !Number.isFinite(nanos) ? undefined : nanos / 1e6
}

/** A trace or span id: bytes from protobuf, hex from JSON; undefined when empty or all zeros (invalid ids). */
export function hexId(value: unknown): string | undefined {
  let hex: string | undefined
  if (typeof value === 'string') hex = value.toLowerCase()
  else if (value instanceof Uint8Array) hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')
  if (!hex || /^0*$/.test(hex)) return undefined
  return hex
}

export function anyValue(value: AnyValue | null | undefined): unknown {
  if (!value) return null
  if (value.stringValue != null) return value.stringValue
  if (value.boolValue != null) return value.boolValue
  if (value.intValue != null) return int64(value.intValue)
  if (value.doubleValue != null) return value.doubleValue
  if (value.arrayValue != null) return Array.isArray(value.arrayValue.values) ? value.arrayValue.values.map(anyValue) : []
  if (value.kvlistValue != null) return attributes(value.kvlistValue.values)
  if (value.bytesValue != null) return typeof value.bytesValue === 'string' ? value.bytesValue : Buffer.from(value.bytesValue).toString('base64')
  return null
}

/** Attributes as a plain object, keys as sent (`http.route`, `service.name`). */
export function attributes(list: KeyValue[] | null | undefined): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  if (!list) return result
  if (!Array.isArray(list)) throw new Error('attributes: must be a list of key-value pairs')
  for (const item of list) {
    if (typeof item !== 'object' || item === null) throw new Error('attributes: must be a list of key-value pairs')
    // A key such as __proto__ would otherwise set the object's prototype instead of a field.
    if (typeof item.key === 'string' && item.key !== '__proto__') result[item.key] = anyValue(item.value)
  }
  return result
}

/** A log body or attribute as the text of a message: strings as they are, other values as JSON. */
export function asText(value: unknown): string {
  if (value === null || value === undefined) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** An enum value: a number from protobuf, a number or its name from JSON. */
export function enumNumber(value: unknown, names: readonly string[]): number {
  if (typeof value === 'number') return value
  if (typeof value === 'string') {
    const index = names.indexOf(value)
    return index === -1 ? 0 : index
  }
  return 0
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString()
}

export function serviceNameOf(resource: Record<string, unknown>): string | undefined {
  const name = resource['service.name']
  return typeof name === 'string' && name !== '' ? name : undefined
}
