import { sql } from 'kysely'
import type { AlertSignal } from '../../alerts/signal.ts'
import { aggregateWindowValues, column, columnIs, VALUE_AGGREGATES } from '../../alerts/event-window.ts'

export const performanceSignals: AlertSignal[] = [
  {
    name: 'performance.metric',
    description: 'An aggregate of a performance metric’s values over the window (name the metric with the `metric` filter)',
    unit: 'the metric’s unit',
    aggregates: VALUE_AGGREGATES,
    filters: { metric: 'the metric’s name (`web.lcp`)', service: 'the service' },
    dimensions: { service: 'the service', metric: 'the metric' },
    absentIsZero: false,
    uiSection: 'performance',
    evaluate: (ctx, query) =>
      aggregateWindowValues(
        ctx,
        { table: 'performance_events', filters: { metric: columnIs('metric'), service: columnIs('service') }, dimensions: { service: column('service'), metric: column('metric') }, value: () => sql.ref('value') },
        query,
      ),
  },
]
