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
}

export function emptyTranslation(): Translation {
  return { events: [], itemOf: [], items: 0 }
}
