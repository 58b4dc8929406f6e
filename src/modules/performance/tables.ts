import type { EventRow } from '../module.ts'

/** Row types of the performance module's tables, as its migrations leave them. */
export interface PerformanceTables {
  performance_events: EventRow & { service: string | null; metric: string; value: number; unit: string | null }
}
