import type { EventRow } from '../module.ts'

/** Row types of the costs module's tables, as its migrations leave them. */
export interface CostTables {
  cost_events: EventRow & { provider: string | null; service: string | null; region: string | null; amount: number; currency: string; period: string }
}
