import type { AlertSignal } from '../../alerts/signal.ts'
import { column, columnIs, countWindowEvents, NO_VALUE_SERIES, payloadField, payloadFieldIs, windowEvents, type EventWindow } from '../../alerts/event-window.ts'
import type { SeriesValue, SignalQuery } from '../../alerts/signal.ts'
import type { PortalContext } from '../../context.ts'
import { moduleDb } from '../read-route.ts'
import { countLevels } from './level-hours.ts'
import type { LogTables } from './tables.ts'

const LOG_WINDOW: EventWindow = {
  table: 'log_events',
  filters: {
    level: columnIs('level'),
    module: columnIs('module'),
    service: payloadFieldIs('service'),
    q: (query, value, store) => query.where(store.containsText('message', value)),
    'field.*': (query, value, store, name) => query.where(store.jsonPathText('data', ['fields', name.slice('field.'.length)]), '=', value),
  },
  dimensions: { level: column('level'), module: column('module'), service: payloadField('service') },
}

const SAMPLE_LINES = 5

export const logSignals: AlertSignal[] = [
  {
    name: 'logs.count',
    description: 'Logs written in the window that match the filters',
    unit: 'logs',
    aggregates: ['count'],
    filters: {
      level: 'the level, as sent (case kept)',
      module: 'the module',
      service: 'the payload’s `service`',
      q: 'case-insensitive text within the message',
      'field.*': '`field.<name>`: the log’s `fields.<name>` equals the value (numbers and booleans as text)',
    },
    dimensions: { level: 'the level', module: 'the module', service: 'the payload’s `service`' },
    absentIsZero: true,
    uiSection: 'logs',
    evaluate: countLogs,
    async contributors(ctx, query, series) {
      const narrowed = query.by === undefined ? query : { ...query, filters: { ...query.filters, [query.by]: series } }
      const { rows } = windowEvents(ctx, LOG_WINDOW, narrowed)
      const lines = await rows.select(['ts', 'level', 'message']).orderBy('ts', 'desc').limit(SAMPLE_LINES).execute()
      return (lines as { ts: unknown; level: unknown; message: unknown }[]).map((line) => ({
        label: String(line.message).slice(0, 300),
        detail: line.level === null ? undefined : String(line.level),
        at: new Date(Number(line.ts)).toISOString(),
      }))
    },
  },
]

/**
 * Logs per series: in an evaluation, from the portal's kept minute counts (`countWindowEvents`); elsewhere (a
 * backtest), by level alone (or not split) from the hourly level counts for the window's whole hours and the logs of
 * its partial hours; any other filter or dimension counts the window's logs.
 */
async function countLogs(ctx: PortalContext, query: SignalQuery): Promise<SeriesValue[]> {
  const byLevelAlone = Object.keys(query.filters).every((name) => name === 'level') && (query.by === undefined || query.by === 'level')
  if (query.kept || !byLevelAlone) return countWindowEvents(ctx, LOG_WINDOW, query)
  // The partial hours' logs of the rule's level only: PostgreSQL then counts them from its (project, level, ts) index
  // rather than reading every log of those hours (a 7-day backtest of an error-level rule over 10M logs: 28.8 → 2.0 s).
  const levelOnly: Record<string, string> = query.filters.level === undefined ? {} : { level: query.filters.level }
  const levels = await countLevels(moduleDb<LogTables>(ctx), query.projectId, query.fromMs, query.toMs, (from, to) =>
    windowEvents(ctx, LOG_WINDOW, { ...query, fromMs: from ?? query.fromMs, toMs: to ?? query.toMs, filters: levelOnly }).rows.select((eb) => ['level', eb.fn.countAll().as('count')]).groupBy('level') as never,
  )
  const kept = query.filters.level === undefined ? levels : levels.filter((row) => row.level === query.filters.level)
  if (query.by === undefined) return [{ series: '', value: kept.reduce((sum, row) => sum + row.count, 0) }]
  return kept.map((row) => ({ series: row.level ?? NO_VALUE_SERIES, value: row.count }))
}
