import type { AlertSignal } from '../../alerts/signal.ts'
import { column, columnIs, countWindowEvents } from '../../alerts/event-window.ts'

export const flagSignals: AlertSignal[] = [
  {
    name: 'flags.changed',
    description: 'Feature-flag changes in the window (a change alert: above 0)',
    unit: 'changes',
    aggregates: ['count'],
    filters: { key: 'the flag’s key', actor: 'who changed it' },
    dimensions: { key: 'the flag’s key', actor: 'who changed it' },
    absentIsZero: true,
    uiSection: 'flags',
    evaluate: (ctx, query) =>
      countWindowEvents(ctx, { table: 'feature_flag_events', filters: { key: columnIs('flag_key'), actor: columnIs('actor') }, dimensions: { key: column('flag_key'), actor: column('actor') } }, query),
  },
]
