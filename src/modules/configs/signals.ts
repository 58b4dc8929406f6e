import type { AlertSignal } from '../../alerts/signal.ts'
import { column, columnIs, countWindowEvents } from '../../alerts/event-window.ts'

export const configSignals: AlertSignal[] = [
  {
    name: 'configs.changed',
    description: 'Configuration changes in the window (a change alert: above 0)',
    unit: 'changes',
    aggregates: ['count'],
    filters: { path: 'the configuration path', actor: 'who changed it' },
    dimensions: { path: 'the configuration path', actor: 'who changed it' },
    absentIsZero: true,
    uiSection: 'configs',
    evaluate: (ctx, query) =>
      countWindowEvents(ctx, { table: 'config_events', filters: { path: columnIs('path'), actor: columnIs('actor') }, dimensions: { path: column('path'), actor: column('actor') } }, query),
  },
]
