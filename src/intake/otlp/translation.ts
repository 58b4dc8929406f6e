/** A portal event as `POST /api/ingest` takes it, built from one OTLP item (or derived from one). */
export interface PortalEvent {
  type: string
  ts: string
  data: Record<string, unknown>
}

/**
 * What an OTLP request became: the events to hand to the ingest pipeline, and for each one the
 * item (span, log record, data point) it stands for — or -1 for an event derived from an item
 * (an exception span event becomes an error occurrence), which is not counted in `rejected…`.
 */
export interface Translation {
  events: PortalEvent[]
  itemOf: number[]
  /** spans, log records or data points in the request */
  items: number
  /** items the translation itself could not store (a data point without a value), each with why: reported like the pipeline's rejections */
  refused: { item: number; reason: string }[]
}

export function emptyTranslation(): Translation {
  return { events: [], itemOf: [], items: 0, refused: [] }
}

/**
 * Counts one item and translates it; a field of the wrong type inside it (`attributes: 5`) refuses
 * that item with the reason, not the whole request, so that its siblings are stored.
 */
export function translateItem(translation: Translation, translate: (item: number) => void): void {
  const item = translation.items++
  const events = translation.events.length
  try {
    translate(item)
  } catch (error) {
    translation.events.length = events
    translation.itemOf.length = events
    translation.refused.push({ item, reason: error instanceof Error ? error.message : String(error) })
  }
}

/** A repeated field: absent or null is empty; anything but a list is the client's 400 (see translateBody), naming the field. */
export function listAt<T>(value: T[] | null | undefined, field: string): T[] {
  if (value === null || value === undefined) return []
  if (!Array.isArray(value)) throw new Error(`${field}: must be a list`)
  return value
}

/** A message that holds items (a resource's, a scope's): one of another type holds none, so nothing is lost by passing over it. */
export function isMessage<T>(value: T | null | undefined): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An item (span, log record, data point) that is not a message is refused, not skipped. */
export function requireMessage(value: unknown, what: string): void {
  if (!isMessage(value)) throw new Error(`${what}: must be an object`)
}
