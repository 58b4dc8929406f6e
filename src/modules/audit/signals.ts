import type { AlertSignal } from '../../alerts/signal.ts'
import { column, columnIs, countWindowEvents, type WindowFilter } from '../../alerts/event-window.ts'

/** `action` matches exactly, or every action that starts with what precedes a final `*` (`webhook.endpoint.*`). */
const actionMatches: WindowFilter = (query, value) => (value.endsWith('*') ? query.where('action', 'like', `${value.slice(0, -1)}%`) : query.where('action', '=', value))

export const auditSignals: AlertSignal[] = [
  {
    name: 'audit.actions',
    description: 'Audit events in the window whose action matches the filter (`project.deleted`, or a prefix ending in `*`)',
    unit: 'actions',
    aggregates: ['count'],
    filters: { action: 'the action, or a prefix ending in `*`', actor: 'who acted', resource: 'what was acted on' },
    dimensions: { action: 'the action', actor: 'who acted', resource: 'the resource' },
    absentIsZero: true,
    uiSection: 'audit',
    evaluate: (ctx, query) =>
      countWindowEvents(
        ctx,
        {
          table: 'audit_events',
          filters: { action: actionMatches, actor: columnIs('actor'), resource: columnIs('resource') },
          dimensions: { action: column('action'), actor: column('actor'), resource: column('resource') },
        },
        query,
      ),
  },
]
