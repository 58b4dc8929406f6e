import type { AlertSignal, SeriesValue, SignalQuery } from '../../alerts/signal.ts'
import { column, columnIs, countWindowEvents, type EventWindow } from '../../alerts/event-window.ts'
import type { PortalContext } from '../../context.ts'
import { groupCountsOverWindow } from '../group-hours.ts'
import { configPathSummary } from './summaries.ts'

const CONFIG_WINDOW: EventWindow = { table: 'config_events', filters: { path: columnIs('path'), actor: columnIs('actor') }, dimensions: { path: column('path'), actor: column('actor') } }

/** Changes per series: by path alone from the hourly path counts for the window's whole hours, else from the window's events. */
async function countChanges(ctx: PortalContext, query: SignalQuery): Promise<SeriesValue[]> {
  const byPathAlone = query.filters.actor === undefined && (query.by === undefined || query.by === 'path')
  const counts = byPathAlone
    ? await groupCountsOverWindow(ctx, {
        table: 'config_events',
        projectId: query.projectId,
        summary: configPathSummary,
        groups: query.filters.path === undefined ? {} : { path: query.filters.path },
        fromMs: query.fromMs,
        toMs: query.toMs,
      })
    : undefined
  if (counts === undefined) return countWindowEvents(ctx, CONFIG_WINDOW, query)
  if (query.by === undefined) return [{ series: '', value: counts.reduce((sum, row) => sum + row.events, 0) }]
  return counts.map((row) => ({ series: String(row.path), value: row.events }))
}

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
    evaluate: countChanges,
  },
]
