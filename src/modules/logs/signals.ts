import type { AlertSignal, SignalQuery } from '../../alerts/signal.ts'
import { column, columnIs, countStoredEventsPerMinute, countWindowEvents, payloadField, payloadFieldIs, windowEvents, type EventWindow, type WholeMinutes } from '../../alerts/event-window.ts'
import type { PortalContext } from '../../context.ts'
import { moduleDb } from '../read-route.ts'
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

/** The per-minute level counts kept at ingest (src/modules/logs/level-counts.ts), read as a window of their own. */
const LEVEL_MINUTES_WINDOW: EventWindow = { table: 'log_level_minutes', weight: 'events', filters: { level: columnIs('level') }, dimensions: { level: column('level') } }

/** Whether the level counts answer the query: no filter but the level, and no series but the level's. */
const byLevelAlone = (query: SignalQuery) => Object.keys(query.filters).every((name) => name === 'level') && (query.by === undefined || query.by === 'level')

/** Whole minutes from the level counts; a project that had logs before they began counts those minutes from its logs. */
const levelMinutes: WholeMinutes = async (ctx, specs, query) => {
  const since = await levelMinutesSince(ctx, query.projectId)
  const [before, counted] = await Promise.all([
    query.fromMs < since ? countStoredEventsPerMinute(ctx, specs, { ...query, toMs: Math.min(query.toMs, since) }) : [],
    query.toMs > since ? countStoredEventsPerMinute(ctx, [LEVEL_MINUTES_WINDOW], { ...query, fromMs: Math.max(query.fromMs, since) }) : [],
  ])
  return [...before, ...counted]
}

async function levelMinutesSince(ctx: PortalContext, projectId: string): Promise<number> {
  const found = await moduleDb<LogTables>(ctx).selectFrom('log_level_minutes_since').select('since').where('project_id', '=', projectId).executeTakeFirst()
  return found === undefined ? Number.NEGATIVE_INFINITY : Number(found.since)
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
    evaluate: (ctx, query) => countWindowEvents(ctx, LOG_WINDOW, query, byLevelAlone(query) ? levelMinutes : undefined),
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
