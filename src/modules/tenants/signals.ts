import type { AlertSignal } from '../../alerts/signal.ts'
import { countWindowEvents } from '../../alerts/event-window.ts'

export const tenantSignals: AlertSignal[] = [
  {
    name: 'tenants.limit_used',
    description: 'The project’s ingest over the window as a percentage of its plan’s limit (a tenant event’s `ingestLimitPerSecond`, else the install’s): alert near the limit',
    unit: '%',
    aggregates: ['avg'],
    filters: {},
    dimensions: {},
    absentIsZero: true,
    uiSection: 'tenants',
    async evaluate(ctx, query) {
      const project = await ctx.storage.db.selectFrom('projects').select('ingest_events_per_second').where('id', '=', query.projectId).executeTakeFirst()
      const limit = Math.min(project?.ingest_events_per_second ?? Infinity, ctx.config.ingest.eventsPerSecond)
      let events = 0
      for (const table of ctx.eventTables) {
        const [counted] = await countWindowEvents(ctx, { table, filters: {}, dimensions: {} }, { ...query, filters: {}, by: undefined })
        events += counted.value
      }
      return [{ series: '', value: (100 * events) / (limit * ((query.toMs - query.fromMs) / 1000)) }]
    },
  },
]
