import type { AlertSignal } from '../../alerts/signal.ts'
import { column, columnIs, countWindowEvents, payloadField, payloadFieldIs, windowEvents, type EventWindow } from '../../alerts/event-window.ts'

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
    evaluate: (ctx, query) => countWindowEvents(ctx, LOG_WINDOW, query),
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
