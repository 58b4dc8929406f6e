import type { EventRow } from '../module.ts'

/** Row types of the traces module's tables, as its migrations leave them. */
export interface TraceTables {
  trace_events: EventRow & { trace_id: string; span_id: string; parent_span_id: string | null; service_name: string | null; name: string | null; duration_ms: number | null }
}
